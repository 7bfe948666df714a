"""Providers turn a prompt into text; the engine owns everything else."""
