"""The ``detector`` judge kind: small groundedness models (pair classifiers and span detectors)
run in process (ONNX Runtime) or behind a server (TEI, vLLM)."""
