# Each area of the suite keeps its fixtures in a plugin module of its own.
pytest_plugins = [
    "tests.plugins.worker",
    "tests.plugins.server",
    "tests.plugins.accounts",
    "tests.plugins.engine",
    "tests.plugins.datasets",
    "tests.plugins.browser",
    "tests.plugins.jobs",
    "tests.plugins.nodes",
]
