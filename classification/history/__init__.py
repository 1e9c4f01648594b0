"""Every status a training job or a batch has been in: the StatusChange rows.

Transitions write theirs in ``TransitionQuerySet.transition``; services.py writes the first one,
when a job or a batch is created; selectors.py reads them for the pages and the API.
"""
