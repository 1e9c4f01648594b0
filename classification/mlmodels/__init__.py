"""Operations on a model once it exists: predict, evaluate, explain, delete, and what a search
(a model type of its own) reads. ``classification.services`` is the public face.

These import nothing from ``classification.jobs``: a job produces a model, and batches use a
model without knowing how it was trained.
"""
