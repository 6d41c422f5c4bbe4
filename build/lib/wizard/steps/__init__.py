"""Step library (installed as wizard.steps)."""
