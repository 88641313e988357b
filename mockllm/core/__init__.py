"""The provider-neutral core: the scenario model, the neutral request, the engine that
answers it, expectations, divergence, faults and validation. It never imports a provider,
the serving path or the log."""
