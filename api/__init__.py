"""MedLitBot's REST API: thin DRF views over the same services and selectors the pages use."""
