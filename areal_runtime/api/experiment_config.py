# SPDX-License-Identifier: Apache-2.0
"""AReaL's experiment configs (``GRPOConfig``, ``PPOConfig`` and their parts) for one machine.

Field names, nesting and defaults follow ``areal.api.cli_args`` for everything that means
something on a laptop: generation, the actor's optimizer and PPO settings, the rollout's
concurrency and staleness bounds, dataset batch sizes, epochs, seed, saver and evaluator
timers. Cluster, GPU, backend-parallelism and scheduler settings are accepted so an AReaL YAML
loads unchanged, and reported once as ignored (``"ignored"`` in a field's metadata); every field has ``metadata["help"]``.

``load_expr_config(argv, GRPOConfig)`` (``config_loading.py``) loads them as AReaL does:
Hydra's compose and overrides, OmegaConf's structured merge.
"""

# help_field()/ignored_field() return dataclasses.field(); ruff cannot see that (RUF009 off).
# ruff: noqa: RUF009

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

from areal_runtime.api.config_fields import help_field, ignored_field
from areal_runtime.api.config_loading import (
    ConfigError,
    build_config,
    ignored_fields_set,
    load_expr_config,
    report_ignored,
)
from areal_runtime.api.generation import GenerationHyperparameters
from areal_runtime.utils.constants import (
    PROX_LOGP_METHOD_RECOMPUTE,
    PROX_LOGP_METHODS_ALL,
    ProxLogpMethod,
)

logger = logging.getLogger("areal_runtime.cli_args")

_RS_LEVELS = ("token", "sequence")
_RS_ACTIONS = ("mask", "clamp")
_RS_METRICS = ("ratio", "kl_k1", "kl_k2", "kl_k3")
_RS_AGGS = ("sum", "mean", "max")


@dataclass
class NormConfig:
    """Reward/advantage normalisation (AReaL's ``NormConfig``)."""

    mean_level: str | None = help_field(
        "batch",
        "Subtract the mean over the 'batch' or each prompt's 'group'; None keeps the raw values.",
    )
    mean_leave1out: bool = help_field(
        False, "Each sample's mean leaves that sample out (the RLOO baseline)."
    )
    std_level: str | None = help_field(
        "batch", "Divide by the std over the 'batch' or the 'group'; None skips the division."
    )
    std_unbiased: bool = help_field(True, "Bessel-corrected (n-1) standard deviation.")
    eps: float = help_field(
        1e-5, "Added to the std before dividing, so a constant group does not divide by zero."
    )
    group_size: int = help_field(
        1, "Samples per prompt that form one group (usually gconfig.n_samples)."
    )

    def __post_init__(self) -> None:
        # The messages are AReaL's (its tests match on them).
        if self.mean_level not in ("batch", "group", None):
            raise ValueError(f"mean_level must be 'batch', 'group' or None, got {self.mean_level}")
        if self.std_level not in ("batch", "group", None):
            raise ValueError(f"std_level must be 'batch', 'group', or None, got {self.std_level}")
        if "group" in (self.mean_level, self.std_level) and self.group_size < 1:
            raise ValueError(
                "group_size must be a positive integer when using group normalization, "
                f"got {self.group_size}"
            )


@dataclass
class MicroBatchSpec:
    n_mbs: int | None = help_field(
        1,
        "Micro-batches per forward/backward pass (gradient accumulation); None lets max_tokens_per_mb decide.",
    )
    granularity: int = help_field(
        1, "Sequences kept together in one micro-batch (a prompt's samples, for instance)."
    )
    max_tokens_per_mb: int | None = help_field(None, "Token cap per micro-batch; None: no cap.")
    n_mbs_divisor: int = help_field(
        1, "The number of micro-batches is rounded up to a multiple of this."
    )
    packing_algorithm: str = help_field(
        "ffd", "How sequences are packed into micro-batches ('ffd': first-fit decreasing)."
    )


@dataclass
class OptimizerConfig:
    """AReaL's ``OptimizerConfig``; ``adam`` is AdamW, as in AReaL's FSDP engine."""

    type: str = help_field("adam", "'adam' (AdamW), 'sgd' or 'adam_bf16' (AdamW here too).")
    lr: float = help_field(1e-3, "Peak learning rate.")
    weight_decay: float = help_field(0.01, "Decoupled weight decay of AdamW.")
    beta1: float = help_field(0.9, "Adam's first-moment decay.")
    beta2: float = help_field(0.999, "Adam's second-moment decay.")
    eps: float = help_field(1e-8, "Adam's denominator epsilon.")
    min_lr_ratio: float = help_field(
        0.0, "The schedule's final learning rate as a fraction of lr (linear and cosine)."
    )
    lr_scheduler_type: str = help_field(
        "constant", "'constant', 'linear' or 'cosine' decay after the warmup."
    )
    warmup_steps_proportion: float = help_field(
        0.001, "Fraction of the training steps spent warming the learning rate up from 0."
    )
    initial_loss_scale: float = ignored_field(
        2**32, "fp16 loss scaling of Megatron's optimizer (no fp16 scaling on one machine)."
    )
    min_loss_scale: float = ignored_field(1.0, "fp16 loss scaling floor of Megatron's optimizer.")
    loss_scale_window: float = ignored_field(
        5, "Steps without overflow before Megatron raises the fp16 loss scale."
    )
    hysteresis: int = ignored_field(
        2, "Overflows tolerated before Megatron lowers the fp16 loss scale."
    )
    gradient_clipping: float = help_field(
        1.0, "Clip the global gradient norm to this value (0 or less: no clipping)."
    )

    def __post_init__(self) -> None:
        if self.type not in ("adam", "sgd", "adam_bf16"):
            raise ValueError(f"optimizer.type must be adam, sgd or adam_bf16, got {self.type!r}")
        if self.lr_scheduler_type not in ("linear", "cosine", "constant"):
            raise ValueError(
                "optimizer.lr_scheduler_type must be linear, cosine or constant, "
                f"got {self.lr_scheduler_type!r}"
            )


@dataclass
class RejectionSamplingConfig:
    """Filtering of stale tokens by the proximal/behaviour divergence (decoupled loss).

    ``action='mask'`` drops the tokens (or sequences) whose metric leaves ``[lower, upper]``;
    ``action='clamp'`` keeps them with the importance weight clipped to the bounds. The checks
    and their messages are AReaL's, so a config AReaL refuses is refused here too.
    """

    level: str = field(
        default="token",
        metadata={
            "help": "Filter stale data per 'token' or per 'sequence' (the sequence's aggregate decides).",
            "choices": list(_RS_LEVELS),
        },
    )
    action: str = field(
        default="mask",
        metadata={
            "help": "'mask' drops filtered tokens from the loss; 'clamp' clips their importance weight to [lower, upper].",
            "choices": list(_RS_ACTIONS),
        },
    )
    metric: str = field(
        default="ratio",
        metadata={
            "help": "What is bounded: 'ratio' (pi_prox / pi_behave) or a KL estimate of it ('kl_k1' = log r, 'kl_k2' = (log r)^2 / 2, 'kl_k3' = 1/r - 1 + log r).",
            "choices": list(_RS_METRICS),
        },
    )
    agg: str = field(
        default="mean",
        metadata={
            "help": "How a sequence's token values are combined at level 'sequence': 'sum', 'mean' or 'max' (in log space for 'ratio').",
            "choices": list(_RS_AGGS),
        },
    )
    upper: float = help_field(
        5.0, "Values above this are filtered ('ratio': must be > 1; 'kl_k2'/'kl_k3': > 0)."
    )
    lower: float | None = help_field(
        None, "Values below this are filtered; None: no lower bound (0 when action is 'clamp')."
    )

    def __post_init__(self) -> None:
        import warnings

        for name, allowed in (
            ("level", _RS_LEVELS),
            ("action", _RS_ACTIONS),
            ("metric", _RS_METRICS),
            ("agg", _RS_AGGS),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got '{getattr(self, name)}'")
        if self.lower is not None and self.lower > self.upper:
            raise ValueError(f"lower ({self.lower}) cannot be greater than upper ({self.upper})")
        if self.metric == "ratio":
            if self.upper <= 1.0:
                # A bound at or below 1 would drop every token whose policy moved at all.
                raise ValueError(
                    f"upper must be > 1.0 for 'ratio' metric (a bound <= 1 filters every token "
                    f"whose probability moved), got {self.upper}"
                )
            if self.lower is not None and self.lower <= 0:
                raise ValueError(f"lower must be positive for 'ratio' metric, got {self.lower}")
        # kl_k1 (log r) can be negative, so only k2 and k3 need a positive upper bound.
        if self.metric in ("kl_k2", "kl_k3") and self.upper <= 0:
            raise ValueError(f"upper must be positive for '{self.metric}' metric, got {self.upper}")
        if self.action == "clamp" and self.metric != "ratio":
            raise ValueError(
                "action='clamp' only supports metric='ratio' (it clips the importance weight "
                f"itself); got metric='{self.metric}'. Use action='mask' for KL-based filtering."
            )
        if self.action == "clamp" and self.lower is None:
            self.lower = 0.0
        if self.level == "token" and self.agg != "mean":
            warnings.warn(
                f"agg='{self.agg}' is ignored when level='token'; it only combines the tokens "
                "of a sequence at level='sequence'.",
                UserWarning,
                stacklevel=2,
            )


@dataclass
class TrainEngineConfig:
    experiment_name: str = help_field(
        "", "Experiment name (usually ${experiment_name}): part of the checkpoint and log paths."
    )
    trial_name: str = help_field(
        "", "Trial name (usually ${trial_name}): part of the checkpoint and log paths."
    )
    path: str = help_field(
        "",
        "The model: a local Hugging Face folder or an embedded name ('default', 'underconfident', ...).",
    )
    attn_impl: str = ignored_field(
        "flash_attention_2",
        "Attention kernel of the GPU engines (the laptop model uses PyTorch's).",
    )
    use_kernels: bool = ignored_field(False, "Fused GPU kernels of the GPU engines.")
    init_from_scratch: bool = help_field(
        False, "Random weights with the model's architecture instead of its trained ones."
    )
    is_critic: bool = help_field(
        False, "A value/reward model (a scalar head) instead of a language model."
    )
    temperature: float = help_field(
        1.0,
        "Sampling temperature the logprobs are computed at; keep it equal to gconfig.temperature.",
    )
    mb_spec: MicroBatchSpec = field(
        default_factory=MicroBatchSpec,
        metadata={"help": "How a training batch is split into micro-batches."},
    )
    pad_to_maximum: bool = ignored_field(
        False, "Pad every micro-batch to the maximum length (a GPU-engine option)."
    )
    disable_dropout: bool = help_field(
        False, "Turn dropout off while training (the recorded logprobs had none)."
    )
    gradient_checkpointing: bool = help_field(
        False, "Recompute activations in the backward pass to save memory."
    )
    dtype: str = help_field("bfloat16", "Parameter dtype ('bfloat16', 'float32', ...).")
    grad_reduce_dtype: str = ignored_field(
        "float32", "Dtype of the data-parallel gradient reduction (one process: none)."
    )
    optimizer: OptimizerConfig | None = help_field(
        None,
        "The optimizer; None for a model that is not trained (ref). The actor needs one: as "
        "AReaL cannot train without it, train() refuses to start.",
    )
    weight_update_mode: str = ignored_field(
        "xccl",
        "How new weights reach the inference servers ('xccl', 'disk'); one process shares them.",
    )
    fsdp: Any = ignored_field({}, "FSDP engine settings (several GPUs).")
    archon: Any = ignored_field({}, "Archon engine settings (several GPUs).")
    megatron: Any = ignored_field({}, "Megatron engine settings (several GPUs).")
    offload: bool = ignored_field(
        False, "Offload parameters to CPU memory between steps (a GPU-memory option)."
    )
    use_lora: bool = ignored_field(
        False, "Train LoRA adapters instead of the full weights (GPU engines)."
    )
    lora_rank: int = ignored_field(32, "LoRA rank.")
    lora_alpha: int = ignored_field(16, "LoRA scaling numerator.")
    target_modules: Any = ignored_field([], "Module names LoRA adapts.")
    peft_type: str = ignored_field("lora", "PEFT method ('lora').")
    enable_tree_training: bool = ignored_field(
        False, "Share prompt prefixes across sequences in one tree (GPU engines)."
    )
    scheduling_spec: Any = ignored_field(None, "Resources of the scheduler's workers (cluster).")
    backend: str = ignored_field(
        "", "Engine and parallelism, e.g. 'fsdp:d4p1t1' (one process here)."
    )
    admin_api_key: str = ignored_field(
        "areal-admin-key", "Key of the engine's admin endpoints (services on a cluster)."
    )
    log_level: str = ignored_field(
        "warning", "Log level of the engine's worker processes (cluster)."
    )
    request_timeout: float = ignored_field(
        3600.0, "Timeout of requests to remote engine workers (cluster)."
    )
    setup_timeout: float = ignored_field(
        3600.0, "Timeout for remote engine workers to start (cluster)."
    )
    scheduling_strategy: Any = ignored_field(None, "Placement of the engine's workers (cluster).")
    _version: str = ignored_field("v1", "AReaL's controller generation, 'v1' or 'v2' (cluster).")


@dataclass
class PPOActorConfig(TrainEngineConfig):
    """The actor's PPO settings, with AReaL's names and defaults."""

    ppo_n_minibatches: int = help_field(
        4, "Optimizer steps per training batch: the batch is split into this many minibatches."
    )
    eps_clip: float = help_field(
        0.2,
        "PPO's clip range: the ratio is clipped to [1 - eps_clip, 1 + eps_clip_higher or eps_clip].",
    )
    eps_clip_higher: float | None = help_field(
        None, "Upper clip range when it differs from eps_clip (DAPO's clip-higher); None: eps_clip."
    )
    c_clip: float | None = help_field(
        None, "Dual-clip bound for negative advantages (> 1); None: no dual clip."
    )
    m2_threshold: float | None = help_field(
        None, "M2PO's second-moment threshold for masking stale tokens; None: off."
    )
    reward_norm: NormConfig | None = help_field(
        None, "Normalisation of rewards before advantages (GRPO: per group); None: raw rewards."
    )
    reward_scaling: float = help_field(
        1.0, "Rewards are multiplied by this (after reward_bias is added)."
    )
    reward_bias: float = help_field(0.0, "Added to every reward before scaling.")
    reward_clip: float = help_field(20.0, "Rewards are clipped to [-reward_clip, reward_clip].")
    overlong_reward_penalty: bool = help_field(
        False, "Penalise completions that run into the last overlong_tokens of the budget (DAPO)."
    )
    overlong_tokens: int | None = help_field(
        None, "Length of the soft-penalty zone at the end of the token budget."
    )
    overlong_penalty_factor: float | None = help_field(
        None, "Largest penalty, reached at the budget's end."
    )
    mask_no_eos_with_zero: bool = help_field(
        False, "Completions cut off without EOS get zero loss weight."
    )
    discount: float = help_field(1.0, "Discount factor gamma over tokens for the advantages.")
    gae_lambda: float = help_field(1.0, "GAE's lambda (1: Monte-Carlo returns).")
    adv_norm: NormConfig | None = help_field(
        None, "Normalisation of the advantages; None: raw advantages."
    )
    kl_ctl: float = help_field(
        0.1, "Weight of the KL penalty against the reference model (0: none; needs ref)."
    )
    kl_estimator: str = help_field("k1", "KL estimator: 'k1', 'k2' or 'k3' (Schulman's).")
    use_sapo_loss: bool = help_field(False, "SAPO's soft gate instead of PPO's hard clip.")
    sapo_tau_pos: float = help_field(1.0, "SAPO gate temperature for positive advantages.")
    sapo_tau_neg: float = help_field(1.05, "SAPO gate temperature for negative advantages.")
    recompute_logprob: bool = help_field(
        False,
        "Recompute the logprobs with the current weights before the update (the proximal policy).",
    )
    use_decoupled_loss: bool = help_field(
        False,
        "Decoupled PPO: clip against the proximal policy, weight by proximal/behaviour (for stale data).",
    )
    rejection_sampling: RejectionSamplingConfig | None = help_field(
        None, "Filter stale tokens by the proximal/behaviour ratio (decoupled loss); None: off."
    )
    importance_sampling_level: str = help_field(
        "token", "Importance ratio per 'token' (PPO) or per 'sequence' (GSPO)."
    )
    prox_logp_method: str = field(
        default=PROX_LOGP_METHOD_RECOMPUTE,
        metadata={
            "help": "How decoupled PPO gets the proximal logprobs: 'recompute' (a no-grad forward before the update), 'loglinear' (no forward: interpolated between the behaviour and current logprobs by policy version) or 'metrics' (recompute, and log how close each approximation comes).",
            "choices": PROX_LOGP_METHODS_ALL,
        },
    )
    log_agent_stats: bool = help_field(False, "Log per-trajectory agent statistics.")
    log_agent_stats_keys: list[str] = field(
        default_factory=list, metadata={"help": "Which agent statistics are logged."}
    )
    max_new_tokens: int = help_field(
        1024, "Longest completion, for the overlong penalty (usually ${gconfig.max_new_tokens})."
    )

    def __post_init__(self) -> None:
        if self.ppo_n_minibatches < 1:
            raise ValueError(f"actor.ppo_n_minibatches must be >= 1, got {self.ppo_n_minibatches}")
        if self.kl_estimator not in ("k1", "k2", "k3"):
            raise ValueError(f"actor.kl_estimator must be k1, k2 or k3, got {self.kl_estimator!r}")
        if self.importance_sampling_level not in ("token", "sequence"):
            raise ValueError(
                "actor.importance_sampling_level must be token or sequence, "
                f"got {self.importance_sampling_level!r}"
            )
        if self.prox_logp_method not in PROX_LOGP_METHODS_ALL:
            raise ValueError(
                f"actor.prox_logp_method must be one of {PROX_LOGP_METHODS_ALL}, "
                f"got {self.prox_logp_method!r}"
            )
        if self.use_sapo_loss:
            if self.sapo_tau_pos <= 0 or self.sapo_tau_neg <= 0:
                raise ValueError(
                    "SAPO temperatures (sapo_tau_pos, sapo_tau_neg) must be positive. "
                    f"Got sapo_tau_pos={self.sapo_tau_pos}, sapo_tau_neg={self.sapo_tau_neg}."
                )
            if self.use_decoupled_loss:
                raise ValueError(
                    "SAPO is not compatible with `use_decoupled_loss=True`. "
                    "Please set `actor.use_decoupled_loss=false` in your configuration."
                )

    def should_compute_prox_logp(self) -> bool:
        """Whether the trainer runs a forward for the proximal logprobs (AReaL's rule).

        Decoupled PPO needs them unless ``prox_logp_method`` approximates them ('loglinear');
        plain PPO only when ``recompute_logprob`` replaces the engine's logprobs.
        """
        if self.use_decoupled_loss:
            return not ProxLogpMethod(self.prox_logp_method).skips_forward_pass()
        return self.recompute_logprob


@dataclass
class PPOCriticConfig(TrainEngineConfig):
    ppo_n_minibatches: int = help_field(4, "Critic optimizer steps per training batch.")
    eps_clip: float = help_field(0.5, "Clip range of the value loss.")
    mask_no_eos_with_zero: bool = help_field(
        False, "Completions cut off without EOS get zero value-loss weight."
    )


AGENT_MODES = ("inline", "subproc", "online")
EXPORT_STYLES = ("individual", "concat")
CHAT_TEMPLATES = ("hf", "concat")
# The proxy parses <tool_call>{json}</tool_call> blocks, the format these parsers share; it
# leaves <think> reasoning in the reply text (AReaL's reasoning parsers move it to
# reasoning_content). The trained tokens are the sampled ones either way.
TOOL_CALL_PARSERS = ("qwen", "qwen25", "hermes")
REASONING_PARSERS = ("qwen3", "qwen3-thinking", "deepseek-r1")


@dataclass
class AgentConfig:
    """AReaL's ``rollout.agent``: how agent workflows run and what they export for training.

    The one type for these settings (YAML, ``PPOTrainer``, the executor): checked when built;
    the service-side keys (scheduling, auth, session timeouts) are accepted and reported as
    ignored.
    """

    agent_cls_path: str = ignored_field(
        "", "Import path of the agent class for AReaL's agent service (cluster)."
    )
    admin_api_key: str = help_field(
        "areal-admin-key",
        "Admin key of the online gateway: outside agents start sessions and set rewards with it (mode 'online').",
    )
    scheduling_spec: Any = ignored_field(
        None, "Resources of the agent service's workers (cluster)."
    )
    mode: str = help_field(
        "inline",
        "Where agents run: 'inline' (the trainer's event loop), 'subproc' (worker processes) or 'online' (outside agents through the gateway).",
    )
    tool_call_parser: str = help_field(
        "qwen",
        "How tool calls are read from the model's text ('qwen', 'qwen25', 'hermes': <tool_call> JSON).",
    )
    reasoning_parser: str = help_field(
        "qwen3", "How <think> reasoning is recognised ('qwen3', 'qwen3-thinking', 'deepseek-r1')."
    )
    chat_template_type: str = help_field(
        "hf",
        "'hf': each request rendered by the tokenizer's chat template; 'concat': turns appended token by token.",
    )
    engine_max_tokens: int | None = help_field(
        None, "Cap on prompt + completion tokens per request; None: the engine's limit."
    )
    turn_discount: float = help_field(
        1.0, "Each earlier turn's reward is the next turn's times this (0 < d <= 1)."
    )
    export_style: str = help_field(
        "individual",
        "'individual': each completion is a training sequence; 'concat': one sequence per conversation (needs chat_template_type concat).",
    )
    subproc_max_workers: int = help_field(4, "Worker processes for mode 'subproc'.")
    session_timeout_seconds: int = ignored_field(
        3600, "Idle time after which the gateway drops a session (services)."
    )
    set_reward_finish_timeout: float = ignored_field(
        0.0, "Wait after the last reward before a session is exported (services)."
    )

    def __post_init__(self) -> None:
        for name, allowed in (
            ("mode", AGENT_MODES),
            ("export_style", EXPORT_STYLES),
            ("chat_template_type", CHAT_TEMPLATES),
            ("tool_call_parser", TOOL_CALL_PARSERS),
            ("reasoning_parser", REASONING_PARSERS),
        ):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"rollout.agent.{name} is {value!r}; use one of {list(allowed)}")
        if self.export_style == "concat" and self.chat_template_type != "concat":
            raise ValueError(
                "rollout.agent.export_style=concat exports one sequence per conversation, which "
                "needs chat_template_type='concat' (turns appended token by token); set "
                "rollout.agent.chat_template_type=concat, or use export_style=individual"
            )
        if not 0 < float(self.turn_discount) <= 1:
            raise ValueError(
                f"rollout.agent.turn_discount must be in (0, 1], got {self.turn_discount}"
            )
        if self.subproc_max_workers < 1:
            raise ValueError(
                f"rollout.agent.subproc_max_workers must be >= 1, got {self.subproc_max_workers}"
            )

    @property
    def online(self) -> bool:
        """Outside agents drive the episodes through the trainer's gateway (mode 'online')."""
        return self.mode == "online"

    def executor_settings(self) -> dict[str, Any]:
        """``RolloutConfig``'s ``agent_mode`` and ``agent_options`` for this mode.

        The one place the mode is mapped: online, each episode is the gateway's own workflow
        (there is no agent to wrap), so the executor runs it inline.
        """
        mode = "inline" if self.online else self.mode
        return {"agent_mode": mode, "agent_options": self.proxy_options()}

    def proxy_options(self) -> dict[str, Any]:
        """What the executor passes when it wraps an agent in the proxy workflow."""
        return {
            "export_style": self.export_style,
            "turn_discount": float(self.turn_discount),
            "chat_template_type": self.chat_template_type,
            "engine_max_tokens": self.engine_max_tokens,
            "subproc_max_workers": self.subproc_max_workers,
        }

    @classmethod
    def of(cls, value: Any) -> AgentConfig:
        """``rollout.agent`` as given (None, a mapping from code or YAML, or an AgentConfig),
        checked: an unknown key names the valid ones."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = dataclasses.asdict(value)
        elif not isinstance(value, dict):
            value = {k: v for k, v in vars(value).items() if not k.startswith("_")}
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(value) - names)
        if unknown:
            raise ValueError(f"rollout.agent has unknown key(s) {unknown}; valid: {sorted(names)}")
        return cls(**value)


@dataclass
class InferenceEngineConfig:
    """The rollout side: concurrency and AReaL's staleness control."""

    experiment_name: str | None = help_field(None, "Experiment name (usually ${experiment_name}).")
    trial_name: str | None = help_field(None, "Trial name (usually ${trial_name}).")
    fileroot: str | None = ignored_field(
        None, "Root of the rollout's files (cluster name resolution)."
    )
    max_concurrent_rollouts: int | None = help_field(
        None, "Episodes running at once; None: consumer_batch_size x (max_head_offpolicyness + 1)."
    )
    queue_size: int | None = help_field(
        None,
        "Finished episodes waiting for the trainer; None: no bound beyond the staleness limit.",
    )
    consumer_batch_size: int = help_field(
        1,
        "Episodes (prompts) per training step, and the staleness capacity's unit. AReaL's step "
        "takes train_dataset.batch_size instead: keep the two equal.",
    )
    max_head_offpolicyness: int = help_field(
        0, "How many weight versions behind an episode may start (0: synchronous RL)."
    )
    enable_rollout_tracing: bool = help_field(False, "Log each episode's start and end.")
    check_trajectory_format: bool = help_field(
        False, "Check every trajectory's tensors (shapes, dtypes, masks) before training."
    )
    tokenizer_path: str = help_field("", "Tokenizer for the rollout (usually ${tokenizer_path}).")
    dump_to_file: bool = ignored_field(
        False, "Write generated episodes to files (cluster debugging)."
    )
    setup_timeout: float = ignored_field(300.0, "Timeout for inference servers to start (cluster).")
    request_timeout: float = help_field(3600, "Seconds a generation request may take.")
    request_retries: int = ignored_field(
        3, "Retries of a failed request to an inference server (cluster)."
    )
    pause_grace_period: float = ignored_field(
        0.0, "Wait before pausing generation for a weight update (cluster)."
    )
    scheduling_spec: Any = ignored_field(None, "Resources of the inference servers (cluster).")
    backend: str = ignored_field(
        "", "Inference server and parallelism, e.g. 'sglang:d4p1t1' (the local engine here)."
    )
    scheduling_strategy: Any = ignored_field(None, "Placement of the inference servers (cluster).")
    use_lora: bool = ignored_field(False, "Serve LoRA adapters (GPU servers).")
    agent: AgentConfig = field(
        default_factory=AgentConfig,
        metadata={"help": "Agent workflows: where they run and what they export (rollout.agent)."},
    )
    return_routed_experts: bool = ignored_field(
        False, "Return MoE routing decisions with each generation (GPU servers)."
    )
    model: str = ignored_field("default", "Model name the inference service routes to (services).")
    routing_strategy: str = ignored_field(
        "round_robin", "How requests are spread over servers (services)."
    )
    poll_interval: float = ignored_field(
        5.0, "Seconds between the controller's status polls (services)."
    )
    admin_api_key: str = ignored_field(
        "areal-admin-key", "Admin key of the inference service (services)."
    )
    api_url: str | None = ignored_field(
        None, "URL of an external OpenAI-compatible service (services)."
    )
    provider_api_key: str | None = ignored_field(None, "Key for the external service (services).")
    _version: str = ignored_field(
        "v1", "AReaL's rollout controller generation, 'v1' or 'v2' (cluster)."
    )

    def __post_init__(self) -> None:
        if self.consumer_batch_size < 1:
            raise ValueError(
                f"rollout.consumer_batch_size must be >= 1, got {self.consumer_batch_size}"
            )
        if self.max_head_offpolicyness < 0:
            raise ValueError(
                f"rollout.max_head_offpolicyness must be >= 0, got {self.max_head_offpolicyness}"
            )


@dataclass
class _Timer:
    experiment_name: str = help_field("", "Experiment name (usually ${experiment_name}).")
    trial_name: str = help_field("", "Trial name (usually ${trial_name}).")
    fileroot: str = help_field("", "Where its files go (usually ${cluster.fileroot}).")
    freq_epochs: int | None = help_field(None, "Act every this many epochs; None: never by epochs.")
    freq_steps: int | None = help_field(None, "Act every this many steps; None: never by steps.")
    freq_secs: int | None = help_field(
        None, "Act when this many seconds have passed; None: never by time."
    )


@dataclass
class EvaluatorConfig(_Timer):
    eval_before_train: bool = help_field(False, "Evaluate once before the first training step.")


@dataclass
class SaverConfig(_Timer):
    mode: str = help_field("auto", "When to save: 'auto' follows the freq_* fields.")


@dataclass
class RecoverConfig(_Timer):
    """AReaL's recovery: ``mode`` on/auto resumes a killed run (see ``utils/recover.py``)."""

    mode: str = help_field(
        "disabled",
        "'disabled'; 'auto' or 'on' resume a killed run from its last recover checkpoint.",
    )
    retries: int = ignored_field(3, "Automatic restarts of a failed run (the cluster launcher's).")
    no_save_optim: bool = help_field(
        False,
        "Leave the optimizer state out of recover checkpoints (smaller, resumes with fresh moments).",
    )
    no_load_optim: bool = help_field(False, "Resume without loading the optimizer state.")

    def __post_init__(self) -> None:
        check_mode(self.mode)


ON_MODES = ("on", "auto")
OFF_MODES = ("off", "disabled")


def check_mode(mode: str) -> bool:
    """Whether ``recover.mode`` turns recovery on; a clear error for any other value."""
    if mode in ON_MODES:
        return True
    if mode in OFF_MODES:
        return False
    raise ValueError(
        f"Invalid recover mode '{mode}': use 'on' or 'auto' (resume from the last recover "
        "checkpoint of this experiment and trial when there is one) or 'off' / 'disabled' "
        "(always start from scratch). Note: 'fault' and 'resume' modes have been removed."
    )


@dataclass
class TrackioConfig:
    """AReaL's Trackio section: a local-first, wandb-like tracker (``pip install trackio``)."""

    mode: str = help_field("disabled", "'disabled', 'online' or 'local'.")
    project: str | None = help_field(None, "Project name; None: the experiment name.")
    name: str | None = help_field(None, "Run name; None: the trial name.")
    space_id: str | None = help_field(
        None, "A Hugging Face Space ('user/space') that also receives the metrics."
    )

    def __post_init__(self) -> None:
        valid = {"disabled", "online", "local"}
        if self.mode not in valid:
            raise ValueError(f"Invalid trackio mode: '{self.mode}'. Must be one of {valid}.")


@dataclass
class StatsLoggerConfig:
    experiment_name: str = help_field("", "Experiment name (usually ${experiment_name}).")
    trial_name: str = help_field("", "Trial name (usually ${trial_name}).")
    fileroot: str = help_field(
        "", "Statistics go under {fileroot}/logs/ (usually ${cluster.fileroot})."
    )
    # Mappings as in AReaL's YAML (``wandb.mode``, ``project``, ``name`` ...; ``tensorboard.path``).
    wandb: Any = field(
        default_factory=lambda: {"mode": "disabled"},
        metadata={
            "help": "Weights & Biases settings as in AReaL (mode, project, name, ...); mode 'disabled' turns it off."
        },
    )
    swanlab: Any = field(
        default_factory=lambda: {"mode": "disabled"},
        metadata={
            "help": "SwanLab settings as in AReaL (mode, project, ...); mode 'disabled' turns it off."
        },
    )
    tensorboard: Any = field(
        default_factory=dict,
        metadata={"help": "TensorBoard settings: path, the folder for event files (none: off)."},
    )
    trackio: TrackioConfig = field(
        default_factory=TrackioConfig,
        metadata={"help": "Trackio (Hugging Face) settings: mode 'disabled' turns it off."},
    )


@dataclass
class SessionTracerConfig:
    """Per-session lifecycle records beside the perf trace (``utils/perf_tracer.py``)."""

    enabled: bool = help_field(
        False, "Write one record per rollout session to session_tracer/sessions-r{rank}.jsonl."
    )
    flush_threshold: int = help_field(
        256, "Write once this many sessions are finished (values <= 0 mean 1)."
    )


@dataclass
class PerfTracerConfig:
    """AReaL's perf tracer: Chrome trace events under ``{fileroot}/logs/.../perf_tracer``."""

    experiment_name: str = help_field("", "Experiment name (usually ${experiment_name}).")
    trial_name: str = help_field("", "Trial name (usually ${trial_name}).")
    fileroot: str = help_field(
        "", "Traces go under {fileroot}/logs/ (usually ${cluster.fileroot})."
    )
    enabled: bool = help_field(False, "Record perf trace events.")
    save_interval: int = help_field(
        1, "Append the buffered events to the file every this many steps (values <= 0 mean 1)."
    )
    profile_steps: list[int] | None = help_field(
        None, "Steps whose profiled scopes also run torch.profiler; None: never."
    )
    session_tracer: SessionTracerConfig | None = help_field(
        None, "Per-session lifecycle records; None: off."
    )


@dataclass
class _DatasetConfig:
    split: str = help_field("train", "Which split to read ('train', 'test').")
    path: str = help_field(
        "",
        "A local .jsonl/.json/.parquet file, a folder, or a dataset name AReaL knows (gsm8k, ...).",
    )
    type: str = help_field("rl", "What the rows are for: 'rl' (prompts), 'sft', 'rw' or 'dpo'.")
    batch_size: int = help_field(1, "Rows per batch.")
    shuffle: bool = help_field(True, "Shuffle the rows each epoch (seeded by seed).")
    pin_memory: bool = ignored_field(False, "Pin host memory for GPU transfers.")
    num_workers: int = ignored_field(0, "Data-loader worker processes.")
    num_dataset_workers: int = ignored_field(1, "Dataset service workers (cluster).")
    drop_last: bool = help_field(True, "Drop the last incomplete batch of an epoch.")
    max_length: int | None = help_field(
        None, "Rows whose prompt is longer than this many tokens are dropped; None: keep all."
    )
    dataset_kwargs: dict[str, Any] = field(
        default_factory=dict, metadata={"help": "Extra keyword arguments for the dataset loader."}
    )
    scheduling_spec: Any = ignored_field(None, "Resources of the dataset service (cluster).")
    setup_timeout: float = ignored_field(
        120.0, "Timeout for the dataset service to start (cluster)."
    )

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"dataset batch_size must be >= 1, got {self.batch_size}")


@dataclass
class TrainDatasetConfig(_DatasetConfig):
    pass


@dataclass
class ValidDatasetConfig(_DatasetConfig):
    split: str = help_field("test", "Which split to read (the evaluation's: 'test').")
    shuffle: bool = help_field(
        False, "Shuffle the evaluation rows (off: the same order every evaluation)."
    )
    drop_last: bool = help_field(
        False, "Drop the last incomplete batch (off: every row is evaluated)."
    )


@dataclass
class BaseExperimentConfig:
    experiment_name: str = help_field(
        "", "Name of the experiment: part of every log and checkpoint path."
    )
    trial_name: str = help_field(
        "", "Name of this run of the experiment: part of every log and checkpoint path."
    )
    # Only fileroot is used (where statistics and recover checkpoints go when a section's own
    # fileroot is empty); the other cluster keys are reported as ignored.
    cluster: Any = field(
        default_factory=dict,
        metadata={
            "ignored": True,
            "used": ("fileroot",),
            "help": "Cluster layout and name resolution; only fileroot is used here (where logs and checkpoints go).",
        },
    )
    allocation_mode: str = ignored_field(
        "",
        "How GPUs are split between inference and training, e.g. 'sglang:d4+fsdp:d4' (one process here).",
    )
    seed: int = help_field(1, "Random seed (shuffling, sampling, initialisation).")
    enable_offload: bool = ignored_field(
        False, "Offload the trainer between steps to free GPU memory."
    )
    total_train_epochs: int = help_field(1, "Passes over the training dataset.")
    total_train_steps: int | None = help_field(
        None, "Stop after this many steps; None: after total_train_epochs."
    )
    total_train_n_seqs: int | None = help_field(
        None, "Stop after this many training sequences; None: no such limit."
    )
    tokenizer_path: str = help_field(
        "", "Tokenizer: a local folder or an embedded name (usually ${actor.path})."
    )
    train_dataset: TrainDatasetConfig = field(
        default_factory=TrainDatasetConfig, metadata={"help": "The training dataset."}
    )
    valid_dataset: ValidDatasetConfig | None = help_field(
        None, "The evaluation dataset; None: no evaluation."
    )
    saver: SaverConfig = field(
        default_factory=SaverConfig, metadata={"help": "When checkpoints are written."}
    )
    evaluator: EvaluatorConfig = field(
        default_factory=EvaluatorConfig,
        metadata={"help": "When the model is evaluated on valid_dataset."},
    )
    stats_logger: StatsLoggerConfig = field(
        default_factory=StatsLoggerConfig,
        metadata={
            "help": "Where statistics go (JSONL always; W&B, SwanLab, TensorBoard when configured)."
        },
    )
    perf_tracer: PerfTracerConfig | None = ignored_field(
        None, "Performance tracing (utils.perf_tracer); the trainer does not configure it."
    )
    memory_profiler: Any = ignored_field(None, "GPU memory profiling.")
    recover: RecoverConfig = field(
        default_factory=RecoverConfig, metadata={"help": "Resuming a killed run."}
    )
    sglang: Any = ignored_field({}, "SGLang server settings (GPU inference).")
    vllm: Any = ignored_field({}, "vLLM server settings (GPU inference).")
    scheduler: Any = ignored_field({}, "The job scheduler (local, Ray, Slurm).")


@dataclass
class PPOConfig(BaseExperimentConfig):
    gconfig: GenerationHyperparameters = field(
        default_factory=GenerationHyperparameters,
        metadata={"help": "Sampling settings of the training rollouts."},
    )
    eval_gconfig: GenerationHyperparameters | None = help_field(
        None, "Sampling settings of evaluation; None: a copy of gconfig."
    )
    rollout: InferenceEngineConfig = field(
        default_factory=InferenceEngineConfig,
        metadata={"help": "The rollout: concurrency, staleness and agent settings."},
    )
    actor: PPOActorConfig = field(
        default_factory=PPOActorConfig,
        metadata={"help": "The trained policy and its PPO settings."},
    )
    ref: PPOActorConfig | None = help_field(
        None, "The frozen reference policy for the KL penalty; None: no reference."
    )
    critic: PPOCriticConfig | None = ignored_field(
        None, "A learned value model (PPO with GAE); GRPO uses none."
    )
    teacher: Any = ignored_field(None, "A teacher model for distillation.")
    dynamic_bs: bool = help_field(
        False, "Dynamic batch size: filtered groups are refilled from the dataset."
    )

    def __post_init__(self) -> None:
        if self.eval_gconfig is None:
            self.eval_gconfig = self.gconfig.new()


@dataclass
class GRPOConfig(PPOConfig):
    """GRPO is PPO with group-normalised rewards and no critic (as in AReaL)."""


# SFT, reward-model and DPO experiments: the runtime trains none of them (its trainer is PPO's),
# but their configs load, so AReaL's SFT/RW/DPO YAMLs and scripts read here and fail at the
# trainer with a clear message instead of at the config.


@dataclass
class SFTConfig(BaseExperimentConfig):
    """AReaL's supervised fine-tuning experiment: one trained model, ``actor``."""

    actor: TrainEngineConfig = field(
        default_factory=TrainEngineConfig, metadata={"help": "The model being fine-tuned."}
    )


@dataclass
class RWConfig(BaseExperimentConfig):
    """AReaL's reward-model experiment: ``actor`` is a critic (a scalar head)."""

    actor: TrainEngineConfig = field(
        default_factory=TrainEngineConfig,
        metadata={"help": "The reward model being trained (actor.is_critic must be true)."},
    )

    def __post_init__(self) -> None:
        if not self.actor.is_critic:
            raise ValueError(
                "RWConfig trains a reward model: set actor.is_critic: true in the YAML"
            )


@dataclass
class DPOEngineConfig(TrainEngineConfig):
    """A DPO-trained model: ``beta`` weighs the implicit KL term of the preference loss."""

    beta: float = help_field(0.1, "Strength of the implicit KL term in the DPO loss.")
    loss_type: str = help_field("sigmoid", "'sigmoid' (DPO) or 'ipo'.")

    def __post_init__(self) -> None:
        if self.loss_type not in ("sigmoid", "ipo"):
            raise ValueError(f"DPO loss_type must be 'sigmoid' or 'ipo', got {self.loss_type!r}")


@dataclass
class DPOConfig(BaseExperimentConfig):
    """AReaL's DPO experiment: the trained ``actor`` and the frozen reference ``ref``."""

    actor: DPOEngineConfig = field(
        default_factory=DPOEngineConfig,
        metadata={"help": "The policy trained on preference pairs."},
    )
    ref: DPOEngineConfig = field(
        default_factory=DPOEngineConfig, metadata={"help": "The frozen reference policy."}
    )

    def __post_init__(self) -> None:
        if self.actor.is_critic:
            raise ValueError("DPOConfig trains a language model: remove actor.is_critic: true")


__all__ = [
    "AgentConfig",
    "BaseExperimentConfig",
    "ConfigError",
    "DPOConfig",
    "DPOEngineConfig",
    "EvaluatorConfig",
    "GRPOConfig",
    "InferenceEngineConfig",
    "MicroBatchSpec",
    "NormConfig",
    "OptimizerConfig",
    "PPOActorConfig",
    "PPOConfig",
    "PPOCriticConfig",
    "RWConfig",
    "RecoverConfig",
    "RejectionSamplingConfig",
    "SFTConfig",
    "SaverConfig",
    "StatsLoggerConfig",
    "TrainDatasetConfig",
    "TrainEngineConfig",
    "ValidDatasetConfig",
    "build_config",
    "ignored_fields_set",
    "load_expr_config",
    "report_ignored",
]
