"""Running episodes: the runner, interventions and metrics. No Qt here."""
