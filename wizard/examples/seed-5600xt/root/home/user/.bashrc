# ~/.bashrc: executed by bash(1) for non-login shells.

export HSA_OVERRIDE_GFX_VERSION=10.3.0
