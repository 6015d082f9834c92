import sys

from consumers.cli.main import main

sys.exit(main())
