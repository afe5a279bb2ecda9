"""The GitHub layer: context, baseline stores, the sticky comment, job outputs, the action."""
