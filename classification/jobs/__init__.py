"""Training jobs: lifecycle (create, claim, cancel, resume), the supervisor in the worker, the
spawned training child, and the reaper. ``classification.services`` is the public face.

Nothing here may import Django models at module level except ``lifecycle``, ``supervisor`` and
``reaper``: the spawned child imports ``child`` before ``django.setup()``.
"""
