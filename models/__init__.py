"""Adapters for every ML model MemoryReel uses, each behind a small interface
(one Protocol per kind in protocols.py); errors a user can act on derive from errors.ModelError.

Only this package imports ML libraries (torch, ultralytics, faster-whisper, rapidocr,
sentence-transformers, llama.cpp, openai). Callers pass settings in; nothing here reads the
environment except the offline switches that the libraries themselves honour.
"""
