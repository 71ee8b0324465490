"""REINFORCE (Williams 1992): a policy network trained on whole-episode returns.

Run on the learning toy (4 cores, 2 jobs, objective makespan)::

    hdeeprm-launch examples/agents/reinforce.py examples/learning/learning.json -nr 300 -o out/reinforce

The policy is the default two-hidden-layer network of
:class:`hdeeprm.agents.learning.PolicyLearningAgent`; its loss is
−Σ_t log π(a_t|s_t) · Ĝ_t with standardised discounted returns Ĝ.
"""
from torch import nn

from hdeeprm.agents.learning import PolicyLearningAgent


class REINFORCEAgent(PolicyLearningAgent):
    """REINFORCE with a small MLP policy.

    Args:
        gamma, hidden, action_size, observation_size: As in the original HDeepRM.
        **kwargs: ``lr``, ``seed``, ``options`` offered by ``hdeeprm-launch``.
    """

    def __init__(self, gamma, hidden, action_size, observation_size, **kwargs):
        super().__init__(gamma, hidden, action_size, observation_size, **kwargs)

    def build_policy(self) -> nn.Module:
        """Observation → hidden (tanh) → logits."""
        return nn.Sequential(nn.Linear(self.observation_size, self.hidden), nn.Tanh(),
                             nn.Linear(self.hidden, self.action_size))
