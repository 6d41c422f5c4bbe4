"""One screen per stage of ``wizard.session.Stage``."""
