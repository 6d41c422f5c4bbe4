"""The Textual wizard: a thin view over ``wizard.session`` (the only package that imports textual)."""
