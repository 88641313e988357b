from mockllm.cli import main

raise SystemExit(main())
