"""Ansible plugins shipped with the wizard; only code under this directory imports ansible (it runs
inside ansible-playbook, which finds it through ANSIBLE_CONNECTION_PLUGINS set by wizard.fleet)."""
