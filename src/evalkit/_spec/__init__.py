"""The files: evalkit.yaml, checks, metric entries, case filters, golden loaders.

Also TREC and BEIR files, CSV export and the run artefact.
"""
