"""``litmus-gate label``: per-step labels from a guard model behind an OpenAI-compatible
chat-completions API (SPEC sections 4 and 7).

- :mod:`pipeline.label.prompt`: the prompt file (template, context budget, request
  parameters) and the rendering of one step with its context into chat messages;
- :mod:`pipeline.label.reply`: parsing a reply into a label, a category and a score;
- :mod:`pipeline.label.client`: the HTTP client (bounded concurrency, retries with
  backoff honouring ``Retry-After``, per-request timeouts);
- :mod:`pipeline.label.endpoint`: the endpoint's URLs (chat-completions, printable, via
  a proxy or not);
- :mod:`pipeline.label.completion`: a chat-completion body read into a cached reply
  (text, log-probabilities, token counts);
- :mod:`pipeline.label.redaction`: the API key taken out of every text the client returns;
- :mod:`pipeline.label.body`: a response body read within its byte bound, decompressed
  (gzip, deflate) within it too;
- :mod:`pipeline.label.cache`: the persistent reply cache (SQLite);
- :mod:`pipeline.label.command`: the command itself (explode, request, write);
- :mod:`pipeline.ingest.label_provenance`: which model and prompt produced a labels file.
"""
