"""An ordinary bug (a Python exception) in the training process ends the job failed with the
exception and a short traceback that points at the code, not with a silent stop."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.job_support import (
    DONE,
    assert_untouched,
    dataset_digest,
    start_faulty_job,
    wait_for_job,
)


@pytest.mark.worker
def test_an_exception_while_loading_the_model_fails_the_job_with_its_traceback(
    start_worker, slice_dataset, earlier_model, tiny_bert_dir: Path, user
) -> None:
    digest = dataset_digest(slice_dataset)
    job = start_faulty_job(start_worker, slice_dataset, tiny_bert_dir, user,
                           faults="raise_in_loading", name="Bug")
    job = wait_for_job(job, DONE, 120)
    assert job.status == "failed", job.reason
    first, *trace = job.reason.splitlines()
    assert first == "Training failed with RuntimeError: injected fault: raise_in_loading"
    assert any("faults.py" in line for line in trace), job.reason
    assert len(trace) <= 30
    assert "error: RuntimeError" in job.log_tail
    assert job.ml_model.status == "failed"
    assert_untouched(slice_dataset, digest, earlier_model)
