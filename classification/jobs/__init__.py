"""Training jobs: lifecycle (create, claim, cancel, resume), the supervisor in the worker, the
spawned training child, and the reaper. ``classification.services`` is the public face.

``child`` and ``core.processes`` must not import Django at module level: the spawned child
imports them before ``django.setup()``. The other modules import models freely; the child reaches them
(``training``, ``progress``) only after setup.
"""
