"""Questions answered over the providers layer's shared records (`providers.base.Record`), for
every provider with a reader: list, show, search, stats, files. Claude Code sessions keep their
deep paths (`sessionsift.providers.claude`, `.search`, `.files`); these modules are the generic path the CLI
takes for every other provider, and what cross-provider consumers call directly."""
