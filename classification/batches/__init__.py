"""Batch classification: a file of articles classified on the inference worker, then a safe CSV.

The truth about a batch is its ``BatchJob`` row; its files live under
MEDIA_ROOT/batches/<owner id>/<batch id>/ (``storage``). Views, the API and the task call
``services`` (writes) and ``selectors`` (reads); ``runner`` is what the worker executes. Who
may see or act on a batch is its project's business (projects.policy), never its owner's.
"""
