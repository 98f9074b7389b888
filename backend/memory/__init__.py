"""Evolving memory (DigimonGPT, WorldMM, MemVerse): semantic and procedural memory in LanceDB,
complexity-aware replay, replay counts, and short-term chat memory. The records the store gives
(MemoryEntry, ReplayCount) are in backend/memory_records.py, where the agent can read them too."""
