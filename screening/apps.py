from django.apps import AppConfig


def stale_simulations_fail() -> str:
    """Beat's maintenance step (core.registry) for simulations whose worker died."""
    from screening.simulation_runs import simulation_runs_fail_stale

    return simulation_runs_fail_stale()


def stale_ranker_locks_clear() -> str:
    """Beat's maintenance step (core.registry) for ranker refreshes whose worker stopped."""
    from screening.ranking import ranker_locks_clear_stale

    return ranker_locks_clear_stale()


class ScreeningConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "screening"
    verbose_name = "Screening"

    def ready(self) -> None:
        from core import registry

        registry.maintenance_step_register(
            name="stale_screening_simulations", func=stale_simulations_fail, order=50
        )
        registry.maintenance_step_register(
            name="stale_screening_ranker_locks", func=stale_ranker_locks_clear, order=51
        )
        from projects.selectors import activity_narrower_register
        from screening.visibility import activity_narrow

        activity_narrower_register(name="screening_blind", func=activity_narrow)
