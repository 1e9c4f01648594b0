"""Training jobs: lifecycle (create, claim, cancel, resume), the supervisor in the worker, the
spawned training child, and the reaper. Operations on the model a job produced (predict,
evaluate, explain, delete) live in ``classification.mlmodels``; ``classification.services`` is
the public face of both.

``child`` and ``core.processes`` must not import Django at module level: the spawned child
imports them before ``django.setup()``. The other modules import models freely; the child
reaches them (``training``, ``progress``) only after setup.
"""
