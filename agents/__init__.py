"""Bots, policies, training and evaluation code for cdc."""
