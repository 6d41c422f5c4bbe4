from wizard.cli import console

raise SystemExit(console())
