"""The Slack edge: translates between Slack (slack-bolt, slack-sdk; Socket Mode or HTTP
mode) and the `Bot` service; it holds no business rule. `SlackEdge(config, ledger)
.running(bot)`."""

from adapters.slack.config import SlackConfig
from adapters.slack.edge import RunningSlack, SlackEdge

__all__ = ["RunningSlack", "SlackConfig", "SlackEdge"]
