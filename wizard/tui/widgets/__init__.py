"""Reusable widgets: the live log pane and the step list."""
