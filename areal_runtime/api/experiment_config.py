# SPDX-License-Identifier: Apache-2.0
"""AReaL's experiment configs (``GRPOConfig``, ``PPOConfig`` and their parts) for one machine.

Field names, nesting and defaults follow ``areal.api.cli_args`` for everything that means
something on a laptop: generation, the actor's optimizer and PPO settings, the rollout's
concurrency and staleness bounds, dataset batch sizes, epochs, seed, saver and evaluator
timers. Cluster, GPU, backend-parallelism and scheduler settings are accepted so an AReaL YAML
loads unchanged, and reported once as ignored (``IGNORED`` in a field's metadata).

``load_expr_config(argv, GRPOConfig)`` (``config_loading.py``) loads them as AReaL does:
Hydra's compose and overrides, OmegaConf's structured merge.
"""

# _ignored() returns a dataclasses.field(); ruff cannot see that, hence RUF009 off here.
# ruff: noqa: RUF009

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.api.config_loading import (
    ConfigError,
    build_config,
    ignored_fields_set,
    load_expr_config,
    report_ignored,
)

logger = logging.getLogger("areal_runtime.cli_args")

IGNORED = {"ignored": True}
"""Field metadata: accepted for AReaL compatibility, has no effect on one machine."""


def _ignored(default: Any = None) -> Any:
    if isinstance(default, dict | list):
        return field(default_factory=lambda: type(default)(default), metadata=IGNORED)
    return field(default=default, metadata=IGNORED)


@dataclass
class NormConfig:
    """Reward/advantage normalisation (AReaL's ``NormConfig``)."""

    mean_level: str | None = "batch"
    mean_leave1out: bool = False
    std_level: str | None = "batch"
    std_unbiased: bool = True
    eps: float = 1e-5
    group_size: int = 1

    def __post_init__(self) -> None:
        for name in ("mean_level", "std_level"):
            if getattr(self, name) not in ("batch", "group", None):
                raise ValueError(
                    f"{name} must be 'batch', 'group' or None, got {getattr(self, name)!r}"
                )
        if "group" in (self.mean_level, self.std_level) and self.group_size < 1:
            raise ValueError(
                f"group_size must be >= 1 for group normalisation, got {self.group_size}"
            )


@dataclass
class MicroBatchSpec:
    n_mbs: int | None = 1
    granularity: int = 1
    max_tokens_per_mb: int | None = None
    n_mbs_divisor: int = 1
    packing_algorithm: str = "ffd"


@dataclass
class OptimizerConfig:
    """AReaL's ``OptimizerConfig``; ``adam`` is AdamW, as in AReaL's FSDP engine."""

    type: str = "adam"
    lr: float = 1e-3
    weight_decay: float = 0.01
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    min_lr_ratio: float = 0.0
    lr_scheduler_type: str = "constant"
    warmup_steps_proportion: float = 0.001
    initial_loss_scale: float = _ignored(2**32)
    min_loss_scale: float = _ignored(1.0)
    loss_scale_window: float = _ignored(5)
    hysteresis: int = _ignored(2)
    gradient_clipping: float = 1.0

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
    """Filtering of stale tokens by the proximal/behaviour divergence (decoupled loss)."""

    level: str = "token"
    action: str = "mask"
    metric: str = "ratio"
    agg: str = "mean"
    upper: float = 5.0
    lower: float | None = None

    def __post_init__(self) -> None:
        if self.level not in ("token", "sequence"):
            raise ValueError(
                f"rejection_sampling.level must be token or sequence, got {self.level!r}"
            )
        if self.action not in ("mask", "clamp"):
            raise ValueError(
                f"rejection_sampling.action must be mask or clamp, got {self.action!r}"
            )
        if self.metric != "ratio":
            raise ValueError(
                f"rejection_sampling.metric {self.metric!r} is not supported on one machine; "
                "use 'ratio'"
            )
        if self.upper <= 1.0:
            raise ValueError(f"rejection_sampling.upper must be > 1.0, got {self.upper}")
        if self.action == "clamp" and self.lower is None:
            self.lower = 0.0


@dataclass
class TrainEngineConfig:
    experiment_name: str = ""
    trial_name: str = ""
    path: str = ""
    attn_impl: str = _ignored("flash_attention_2")
    use_kernels: bool = _ignored(False)
    init_from_scratch: bool = False
    is_critic: bool = False
    temperature: float = 1.0
    mb_spec: MicroBatchSpec = field(default_factory=MicroBatchSpec)
    pad_to_maximum: bool = _ignored(False)
    disable_dropout: bool = False
    gradient_checkpointing: bool = False
    dtype: str = "bfloat16"
    grad_reduce_dtype: str = _ignored("float32")
    optimizer: OptimizerConfig | None = None
    weight_update_mode: str = _ignored("xccl")
    fsdp: Any = _ignored({})
    archon: Any = _ignored({})
    megatron: Any = _ignored({})
    offload: bool = _ignored(False)
    use_lora: bool = _ignored(False)
    lora_rank: int = _ignored(32)
    lora_alpha: int = _ignored(16)
    target_modules: Any = _ignored([])
    peft_type: str = _ignored("lora")
    enable_tree_training: bool = _ignored(False)
    scheduling_spec: Any = _ignored(None)
    backend: str = _ignored("")
    admin_api_key: str = _ignored("areal-admin-key")
    log_level: str = _ignored("warning")
    request_timeout: float = _ignored(3600.0)
    setup_timeout: float = _ignored(3600.0)
    scheduling_strategy: Any = _ignored(None)
    _version: str = _ignored("v1")


@dataclass
class PPOActorConfig(TrainEngineConfig):
    """The actor's PPO settings, with AReaL's names and defaults."""

    ppo_n_minibatches: int = 4
    eps_clip: float = 0.2
    eps_clip_higher: float | None = None
    c_clip: float | None = None
    m2_threshold: float | None = None
    reward_norm: NormConfig | None = None
    reward_scaling: float = 1.0
    reward_bias: float = 0.0
    reward_clip: float = 20.0
    overlong_reward_penalty: bool = False
    overlong_tokens: int | None = None
    overlong_penalty_factor: float | None = None
    mask_no_eos_with_zero: bool = False
    discount: float = 1.0
    gae_lambda: float = 1.0
    adv_norm: NormConfig | None = None
    kl_ctl: float = 0.1
    kl_estimator: str = "k1"
    use_sapo_loss: bool = False
    sapo_tau_pos: float = 1.0
    sapo_tau_neg: float = 1.05
    recompute_logprob: bool = False
    use_decoupled_loss: bool = False
    rejection_sampling: RejectionSamplingConfig | None = None
    importance_sampling_level: str = "token"
    prox_logp_method: str = "recompute"
    log_agent_stats: bool = False
    log_agent_stats_keys: list[str] = field(default_factory=list)
    max_new_tokens: int = 1024

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

    def should_compute_prox_logp(self) -> bool:
        """Whether the trainer recomputes logprobs before the update (AReaL's rule)."""
        return self.recompute_logprob or self.use_decoupled_loss


@dataclass
class PPOCriticConfig(TrainEngineConfig):
    ppo_n_minibatches: int = 4
    eps_clip: float = 0.5
    mask_no_eos_with_zero: bool = False


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

    agent_cls_path: str = _ignored("")
    admin_api_key: str = _ignored("areal-admin-key")
    scheduling_spec: Any = _ignored(None)
    mode: str = "inline"
    tool_call_parser: str = "qwen"
    reasoning_parser: str = "qwen3"
    chat_template_type: str = "hf"
    engine_max_tokens: int | None = None
    turn_discount: float = 1.0
    export_style: str = "individual"
    subproc_max_workers: int = 4
    session_timeout_seconds: int = _ignored(3600)
    set_reward_finish_timeout: float = _ignored(0.0)

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

    experiment_name: str | None = None
    trial_name: str | None = None
    fileroot: str | None = _ignored(None)
    max_concurrent_rollouts: int | None = None
    queue_size: int | None = None
    consumer_batch_size: int = 1
    max_head_offpolicyness: int = 0
    enable_rollout_tracing: bool = False
    check_trajectory_format: bool = False
    tokenizer_path: str = ""
    dump_to_file: bool = _ignored(False)
    setup_timeout: float = _ignored(300.0)
    request_timeout: float = 3600
    request_retries: int = _ignored(3)
    pause_grace_period: float = _ignored(0.0)
    scheduling_spec: Any = _ignored(None)
    backend: str = _ignored("")
    scheduling_strategy: Any = _ignored(None)
    use_lora: bool = _ignored(False)
    agent: AgentConfig = field(default_factory=AgentConfig)
    return_routed_experts: bool = _ignored(False)
    model: str = _ignored("default")
    routing_strategy: str = _ignored("round_robin")
    poll_interval: float = _ignored(5.0)
    admin_api_key: str = _ignored("areal-admin-key")
    api_url: str | None = _ignored(None)
    provider_api_key: str | None = _ignored(None)
    _version: str = _ignored("v1")

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
    experiment_name: str = ""
    trial_name: str = ""
    fileroot: str = ""
    freq_epochs: int | None = None
    freq_steps: int | None = None
    freq_secs: int | None = None


@dataclass
class EvaluatorConfig(_Timer):
    eval_before_train: bool = False


@dataclass
class SaverConfig(_Timer):
    mode: str = "auto"


@dataclass
class RecoverConfig(_Timer):
    """AReaL's recovery: ``mode`` on/auto resumes a killed run (see ``utils/recover.py``)."""

    mode: str = "disabled"
    retries: int = _ignored(3)
    no_save_optim: bool = False
    no_load_optim: bool = False

    def __post_init__(self) -> None:
        from areal_runtime.utils.recover import check_mode

        check_mode(self.mode)


@dataclass
class StatsLoggerConfig:
    experiment_name: str = ""
    trial_name: str = ""
    fileroot: str = ""
    # Mappings as in AReaL's YAML (``wandb.mode``, ``project``, ``name`` ...; ``tensorboard.path``).
    wandb: Any = field(default_factory=lambda: {"mode": "disabled"})
    swanlab: Any = field(default_factory=lambda: {"mode": "disabled"})
    tensorboard: Any = field(default_factory=dict)
    trackio: Any = _ignored({})


@dataclass
class _DatasetConfig:
    split: str = "train"
    path: str = ""
    type: str = "rl"
    batch_size: int = 1
    shuffle: bool = True
    pin_memory: bool = _ignored(False)
    num_workers: int = _ignored(0)
    num_dataset_workers: int = _ignored(1)
    drop_last: bool = True
    max_length: int | None = None
    dataset_kwargs: dict[str, Any] = field(default_factory=dict)
    scheduling_spec: Any = _ignored(None)
    setup_timeout: float = _ignored(120.0)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"dataset batch_size must be >= 1, got {self.batch_size}")


@dataclass
class TrainDatasetConfig(_DatasetConfig):
    pass


@dataclass
class ValidDatasetConfig(_DatasetConfig):
    split: str = "test"
    shuffle: bool = False
    drop_last: bool = False


@dataclass
class BaseExperimentConfig:
    experiment_name: str = ""
    trial_name: str = ""
    # Only fileroot is used (where statistics and recover checkpoints go when a section's own
    # fileroot is empty); the other cluster keys are reported as ignored.
    cluster: Any = field(default_factory=dict, metadata={"ignored": True, "used": ("fileroot",)})
    allocation_mode: str = _ignored("")
    seed: int = 1
    enable_offload: bool = _ignored(False)
    total_train_epochs: int = 1
    total_train_steps: int | None = None
    total_train_n_seqs: int | None = None
    tokenizer_path: str = ""
    train_dataset: TrainDatasetConfig = field(default_factory=TrainDatasetConfig)
    valid_dataset: ValidDatasetConfig | None = None
    saver: SaverConfig = field(default_factory=SaverConfig)
    evaluator: EvaluatorConfig = field(default_factory=EvaluatorConfig)
    stats_logger: StatsLoggerConfig = field(default_factory=StatsLoggerConfig)
    perf_tracer: Any = _ignored(None)
    memory_profiler: Any = _ignored(None)
    recover: RecoverConfig = field(default_factory=RecoverConfig)
    sglang: Any = _ignored({})
    vllm: Any = _ignored({})
    scheduler: Any = _ignored({})


@dataclass
class PPOConfig(BaseExperimentConfig):
    gconfig: GenerationHyperparameters = field(default_factory=GenerationHyperparameters)
    eval_gconfig: GenerationHyperparameters | None = None
    rollout: InferenceEngineConfig = field(default_factory=InferenceEngineConfig)
    actor: PPOActorConfig = field(default_factory=PPOActorConfig)
    ref: PPOActorConfig | None = None
    critic: PPOCriticConfig | None = _ignored(None)
    teacher: Any = _ignored(None)
    dynamic_bs: bool = False

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

    actor: TrainEngineConfig = field(default_factory=TrainEngineConfig)


@dataclass
class RWConfig(BaseExperimentConfig):
    """AReaL's reward-model experiment: ``actor`` is a critic (a scalar head)."""

    actor: TrainEngineConfig = field(default_factory=TrainEngineConfig)

    def __post_init__(self) -> None:
        if not self.actor.is_critic:
            raise ValueError(
                "RWConfig trains a reward model: set actor.is_critic: true in the YAML"
            )


@dataclass
class DPOEngineConfig(TrainEngineConfig):
    """A DPO-trained model: ``beta`` weighs the implicit KL term of the preference loss."""

    beta: float = 0.1
    loss_type: str = "sigmoid"

    def __post_init__(self) -> None:
        if self.loss_type not in ("sigmoid", "ipo"):
            raise ValueError(f"DPO loss_type must be 'sigmoid' or 'ipo', got {self.loss_type!r}")


@dataclass
class DPOConfig(BaseExperimentConfig):
    """AReaL's DPO experiment: the trained ``actor`` and the frozen reference ``ref``."""

    actor: DPOEngineConfig = field(default_factory=DPOEngineConfig)
    ref: DPOEngineConfig = field(default_factory=DPOEngineConfig)

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
