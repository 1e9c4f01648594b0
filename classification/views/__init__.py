"""The classification pages, one module per area; urls.py imports the modules directly."""
