"""MemoryReel's core: ingest, symbolic and vector memory, SQL runner, CLI."""
