"""Evolving memory (DigimonGPT, WorldMM, MemVerse): semantic and procedural memory in LanceDB,
complexity-aware replay, replay counts, and short-term chat memory."""
