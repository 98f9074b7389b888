"""Evaluation harness: question files, runs with JSONL results, scoring, ablations, reports."""
