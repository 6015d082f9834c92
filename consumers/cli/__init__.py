"""The ``groundguard`` command line, apart from the runtime it drives.

- :mod:`consumers.cli.main`: the parser and ``main`` (the ``groundguard`` entry point);
- :mod:`consumers.cli.commands`: one module per sub-command;
- :mod:`consumers.cli.terminal`: verdicts and status lines for a terminal;
- :mod:`consumers.cli.demo` and :mod:`consumers.cli.broker`: ``groundguard demo`` and the local
  Kafka broker it (and the tests) start; ``data/``: the demo's sample traffic.

The runtime (:mod:`consumers.runtime.service` and its modules) never imports this package.
"""
