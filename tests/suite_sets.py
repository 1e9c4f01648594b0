"""Which tests run where: the PostgreSQL set and the serial group, each test with its reason.

SQLite runs the whole suite. PostgreSQL runs only what can differ there: concurrency and row
locks, conditional updates, migrations, JSON and subquery SQL, several processes or nodes on one
database, what once caught a PostgreSQL-only bug (never removed from this list), and one smoke
test per app. `tests/conftest.py` gives each listed file's tests the marker `pg(reason)`; a test
module may also carry `pytestmark = pytest.mark.pg("reason")` itself. `scripts/test.sh` selects
the set with `-m pg`.

The serial group runs one test at a time, at normal priority, while the parallel suite runs
beside it at nice 15 (scripts/test.sh): its tests measure memory or time against the whole
machine, and a niced neighbour yields the CPU to them (among them the job-supervision tests
whose assertions are about how fast a cancel, a grace period or a hard limit acts: in parallel
runs at equal priority they failed only under load), or start whole deployments whose ports and
processes would fight. The several-nodes test is
not among them: every node takes free ports and a folder of its own, it needs PostgreSQL
(skipped on SQLite), and its waits are minutes long, so it runs in the PostgreSQL set's parallel
phase beside the rest of that set instead of after it, alone (about 140 s of wall time saved).

A listed name that matches no test file fails the collection, so neither list rots silently.
"""

from __future__ import annotations

CONCURRENCY = "concurrency: row locks and conditional updates race for real on PostgreSQL"
CAUGHT = "caught a PostgreSQL-only bug once (see git log); it never leaves this set"
MIGRATION = "a data migration, run on PostgreSQL's own column types and constraints"
SQL = "JSON, subquery or ordering SQL that each database compiles its own way"
PROCESSES = "several processes share one database: worker, web and maintenance"
NODES = "several nodes share one PostgreSQL, as in production"


def smoke(app: str) -> str:
    return f"smoke: the {app} app's main path on PostgreSQL"


POSTGRES_SET: dict[str, str] = {
    # Conditional updates and claims: a duplicate delivery must change no second row.
    "test_job_claim_happens_exactly_once": CONCURRENCY,
    "test_job_duplicate_delivery_trains_only_once": CONCURRENCY,
    "test_batch_duplicate_delivery_classifies_only_once": CONCURRENCY,
    "test_status_changes_a_duplicate_transition_writes_no_second_row": CONCURRENCY,
    "test_status_changes_of_a_twice_delivered_job_are_one_claim_and_one_end": CONCURRENCY,
    "test_commands_cleanup_stuck_training_reports_and_is_idempotent": CONCURRENCY,
    "test_batch_worker_that_counts_shards_just_before_the_cut_ends_does_not_cut_again":
        CONCURRENCY,
    "test_batch_reaper_requeues_a_dead_workers_shard_and_fails_the_batch_when_its_attempts_run_out":
        CONCURRENCY,
    "test_saved_search_run_failed_as_stale_does_not_version_the_collection_when_its_worker_comes_back":
        CONCURRENCY,
    "test_screening_two_reviewers_screen_blind_and_a_maintainer_resolves_their_conflict":
        CONCURRENCY,
    "test_screening_ranker_refresh_reorders_the_queue_and_a_crash_keeps_the_last_ranking":
        CONCURRENCY,
    "test_projects_the_last_owner_cannot_leave": CONCURRENCY,
    # Several processes on one database.
    "test_job_web_reads_during_training_never_hit_database_locked": PROCESSES,
    "test_batch_shards_run_on_two_inference_workers_and_survive_one_killed_mid_shard": PROCESSES,
    "test_job_killed_worker_is_cleaned_up_as_stalled_and_resumes_from_its_checkpoint": PROCESSES,
    "test_checkpoints_are_published_while_training_and_restored_on_another_node": NODES,
    "test_several_nodes_share_object_storage_and_a_killed_nodes_job_resumes_on_another": CAUGHT,
    # Migrations.
    "test_api_tokens_plain_drf_tokens_are_migrated_hashed_and_their_table_dropped": CAUGHT,
    "test_projects_migration_gives_every_user_a_personal_project_and_loses_no_row": MIGRATION,
    "test_status_changes_migration_gives_existing_jobs_and_batches_a_history": MIGRATION,
    # SQL that differs.
    "test_a_small_transformer_trains_with_its_own_learning_rate_unless_one_is_given": CAUGHT,
    "test_api_docs_examples_are_valid_requests": CAUGHT,
    "test_settings_choose_the_database": CAUGHT,
    "test_maintenance_runs_every_apps_registered_step_and_survives_a_failing_one": CAUGHT,
    "test_web_security": CAUGHT,
    "test_pages_and_api_lists_run_as_many_queries_whatever_the_rows_and_projects": SQL,
    "test_saved_search_api_list_reads_every_latest_run_in_a_fixed_number_of_queries": SQL,
    "test_status_changes_are_read_in_one_query_however_long_the_history": SQL,
    "test_dashboard_lists_running_jobs_before_queued_ones": SQL,
    "test_list_apis_page_their_results_fifty_at_a_time": SQL,
    "test_readyz_and_doctor_name_the_database_and_cache_in_use_without_secrets": SQL,
    # One smoke pass per app.
    "test_api_endpoints": smoke("api"),
    "test_readme_shell_example_trains_the_demo_dataset_and_follows_its_job":
        smoke("classification"),
    "test_batch_from_the_classify_page_runs_on_a_real_inference_worker": smoke("batches"),
    "test_dataset_import_runs_on_a_worker_from_upload_to_dataset": smoke("dataset_management"),
    "test_collection_of_three_exports_merges_planted_duplicates_and_counts_them":
        smoke("dataset_management collections"),
    "test_screening_pages_and_api_let_two_reviewers_screen_blind_and_a_maintainer_resolve":
        smoke("screening"),
    "test_saved_search_run_imports_only_new_pmids_as_a_collection_version_with_a_digest":
        smoke("literature"),
    "test_projects_each_role_may_do_exactly_its_actions_on_web_api_and_cli": smoke("projects"),
    "test_api_projects_members_and_activity": smoke("projects API"),
    "test_web_pages": smoke("web"),
    "test_worker_writes_to_the_database": smoke("core (worker heartbeats)"),
}


TIMING = ("asserts how fast supervision reacts (cancel grace, hard limit, a stop within a step); "
          "beside other tests the figure would be the machine's load, not the code's")

SERIAL_SET: dict[str, str] = {
    "test_job_hard_time_limit_ends_the_job_failed": TIMING,
    "test_job_cancel_on_a_slow_training_is_honoured_at_the_next_step_without_a_kill": TIMING,
    "test_job_child_that_ignores_cancel_is_killed_after_the_grace_period": TIMING,
    "test_job_killed_after_ignoring_cancel_reports_the_newest_complete_checkpoint": TIMING,
    "test_search_cancel_keeps_the_best_model_and_resume_continues_the_study": TIMING,
    "test_gzip_bomb_posted_to_the_api_is_refused_naming_the_limit_with_flat_memory":
        "measures the web's and the worker's memory against an idle machine",
    "test_dataset_import_of_five_million_rows_is_refused_on_the_worker_while_the_web_answers":
        "writes and imports 5 million rows; its memory bound is measured against an idle machine",
    "test_upload_of_1_gb_to_gunicorn_is_cut_off_with_flat_memory":
        "streams 1 GB; its flat-memory bound is measured against an idle machine",
    "test_search_beside_two_cpu_burners_completes_within_its_budget":
        "brings its own CPU burners; other tests beside them would break its time budget",
    "test_start_script_restarts_a_dead_process_while_the_web_keeps_answering":
        "starts a whole deployment",
    "test_start_script_runs_every_process_and_ctrl_c_stops_them": "starts a whole deployment",
}
