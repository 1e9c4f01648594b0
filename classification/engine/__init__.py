"""MedLitBot's training engine: no Django. Public surface: classification.ml_models."""
