# SPDX-License-Identifier: Apache-2.0
"""AReaL's experiment configs (``GRPOConfig``, ``PPOConfig`` and their parts) for one machine.

Field names, nesting and defaults follow ``areal.api.cli_args`` for everything that means
something on a laptop: generation, the actor's optimizer and PPO settings, the rollout's
concurrency and staleness bounds, dataset batch sizes, epochs, seed, saver and evaluator
timers. Cluster, GPU, backend-parallelism and scheduler settings are accepted so an AReaL YAML
loads unchanged, and reported once as ignored (``IGNORED`` in a field's metadata).

``load_expr_config(argv, GRPOConfig)`` reads ``--config file.yaml key.sub=value ...`` as AReaL
does (``${a.b}`` interpolation included), without Hydra/OmegaConf: an unknown key is an error
that names the key and the valid keys at that level. PyYAML is imported only when loading.
"""

# _ignored() returns a dataclasses.field(); ruff cannot see that, hence RUF009 off here.
# ruff: noqa: RUF009

from __future__ import annotations

import dataclasses
import logging
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from areal_runtime.api.cli_args import GenerationHyperparameters

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


@dataclass
class AgentConfig:
    """AReaL's ``rollout.agent``: how agent workflows run and what they export for training.

    Checked when built (``areal_runtime.trainer.agent_settings``); the service-side keys
    (scheduling, auth, session timeouts) are accepted and reported as ignored.
    """

    agent_cls_path: str = _ignored("")
    admin_api_key: str = "areal-admin-key"  # the online gateway's admin key
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
        from areal_runtime.trainer.agent_settings import agent_settings

        agent_settings(self)


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


# ---------------------------------------------------------------------------------------------
# Loading: YAML + dotted overrides + ${a.b} interpolation, validated against the dataclasses.

ConfigT = TypeVar("ConfigT")
_INTERP = re.compile(r"\$\{([^}]+)\}")


class ConfigError(ValueError):
    """A config file or override that cannot be loaded; the message names the key and the fix."""


def ignored_fields_set(config: Any, prefix: str = "") -> list[str]:
    """Dotted names of ignored fields whose value differs from the default."""
    found: list[str] = []
    if not dataclasses.is_dataclass(config):
        return found
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        name = f"{prefix}{f.name}"
        if f.metadata.get("ignored"):
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
            used = f.metadata.get("used", ())
            if used and isinstance(value, dict):
                found.extend(f"{name}.{key}" for key in value if key not in used)
            elif value != default and value not in (None, {}, [], ""):
                found.append(name)
        elif dataclasses.is_dataclass(value):
            found.extend(ignored_fields_set(value, name + "."))
    return found


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _dataclass_in(tp: Any) -> type | None:
    """The dataclass in ``tp`` (``X`` or ``X | None``), else None."""
    if dataclasses.is_dataclass(tp):
        return tp  # type: ignore[return-value]
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        for arg in typing.get_args(tp):
            if dataclasses.is_dataclass(arg):
                return arg
    return None


def _coerce(value: Any, tp: Any, where: str) -> Any:
    """YAML scalars to the field's type (``1e-8`` is a string to PyYAML; AReaL accepts it)."""
    if value is None:
        return None
    args = (
        typing.get_args(tp)
        if (isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union)
        else (tp,)
    )
    scalar = [a for a in args if a in (int, float, bool, str)]
    if not scalar or any(
        isinstance(value, a) and not (a is int and isinstance(value, bool)) for a in scalar
    ):
        if float in scalar and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        return value
    target = scalar[0]
    try:
        if target is bool and isinstance(value, str):
            if value.lower() in ("true", "false"):
                return value.lower() == "true"
            raise ValueError(value)
        if target is int and isinstance(value, float) and value.is_integer():
            return int(value)
        if target in (int, float) and isinstance(value, str):
            return target(float(value)) if target is int else float(value)
        if target is str and isinstance(value, int | float):
            return str(value)
    except ValueError:
        pass
    raise ConfigError(f"{where}: expected {getattr(target, '__name__', target)}, got {value!r}")


def build_config(cls: type[ConfigT], data: dict[str, Any] | None, where: str = "") -> ConfigT:
    """Instantiate dataclass ``cls`` from a nested dict; unknown keys raise ConfigError."""
    data = dict(data or {})
    names = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    hints = _hints(cls)
    unknown = sorted(k for k in data if k not in names)
    if unknown:
        level = where.rstrip(".") or "the top level"
        valid = sorted(n for n in names if not n.startswith("_"))
        import difflib

        close = difflib.get_close_matches(unknown[0], valid, n=1)
        raise ConfigError(
            f"unknown config key '{where}{unknown[0]}' ({cls.__name__})"
            + (f" and {[where + u for u in unknown[1:]]}" if len(unknown) > 1 else "")
            + (f"; did you mean '{where}{close[0]}'?" if close else "")
            + f" Valid keys at {level}: {', '.join(valid)}"
        )
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        tp = hints[key]
        sub = _dataclass_in(tp)
        if names[key].metadata.get("ignored"):
            kwargs[key] = value
        elif sub is not None and isinstance(value, dict):
            kwargs[key] = build_config(sub, value, f"{where}{key}.")
        elif sub is not None and value is not None and not dataclasses.is_dataclass(value):
            raise ConfigError(
                f"{where}{key}: expected a mapping of {sub.__name__} fields, got {value!r}"
            )
        else:
            kwargs[key] = _coerce(value, tp, f"{where}{key}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{where.rstrip('.') or cls.__name__}: {exc}") from None


def _defaults_dict(cls: type) -> dict[str, Any]:
    return dataclasses.asdict(cls())  # type: ignore[call-overload]


def _lookup(root: dict[str, Any], dotted: str) -> Any:
    node: Any = root
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ConfigError(f"interpolation ${{{dotted}}}: no key {dotted!r} in the config")
        node = node[part]
    return node


def _resolve(node: Any, root: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    if isinstance(node, dict):
        return {k: _resolve(v, root, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve(v, root, seen) for v in node]
    if not isinstance(node, str) or "${" not in node:
        return node
    whole = _INTERP.fullmatch(node.strip())
    if whole:
        key = whole.group(1).strip()
        if key in seen:
            raise ConfigError(f"interpolation cycle: {' -> '.join((*seen, key))}")
        return _resolve(_lookup(root, key), root, (*seen, key))

    def text(m: re.Match) -> str:
        key = m.group(1).strip()
        if key in seen:
            raise ConfigError(f"interpolation cycle: {' -> '.join((*seen, key))}")
        return str(_resolve(_lookup(root, key), root, (*seen, key)))

    return _INTERP.sub(text, node)


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _merge(base.get(k), v) if k in base else v
        return out
    return over


def _set_dotted(root: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = root
    for i, part in enumerate(parts[:-1]):
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        if not isinstance(nxt, dict):
            raise ConfigError(
                f"override {dotted}: {'.'.join(parts[: i + 1])} is {nxt!r}, not a mapping"
            )
        node = nxt
    node[parts[-1]] = value


def parse_overrides(overrides: list[str]) -> list[tuple[str, Any]]:
    import yaml

    parsed = []
    for item in overrides:
        key, sep, raw = item.lstrip("+").partition("=")
        if not sep or not key or key.startswith("-"):
            raise ConfigError(
                f"cannot read the override {item!r}: write key.sub=value (e.g. actor.optimizer.lr=1e-4)"
            )
        try:
            value = yaml.safe_load(raw) if raw != "" else ""
        except yaml.YAMLError:
            value = raw
        parsed.append((key.strip(), value))
    return parsed


def load_config_dict(
    path: str | Path | None, overrides: list[str], config_cls: type
) -> dict[str, Any]:
    """The merged, resolved dict: dataclass defaults <- YAML file <- overrides."""
    import yaml

    raw: dict[str, Any] = {}
    if path is not None:
        file = Path(path)
        if not file.is_file():
            raise ConfigError(f"config file {file} does not exist")
        try:
            loaded = yaml.safe_load(file.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ConfigError(f"{file} is not valid YAML: {exc}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(
                f"{file} must hold a mapping of config keys, got {type(loaded).__name__}"
            )
        raw = loaded or {}
    for key, value in parse_overrides(overrides):
        _set_dotted(raw, key, value)
    # ``${a.b}`` may name a default the file does not set; only the user's keys are built, so
    # a field the user left out keeps its dataclass default (eval_gconfig None -> gconfig).
    return _resolve(raw, _merge(_defaults_dict(config_cls), raw))


_reported_ignored: set[tuple[str, ...]] = set()


def report_ignored(config: Any) -> list[str]:
    """Log, once per distinct set, which AReaL settings have no effect on one machine."""
    names = ignored_fields_set(config)
    key = tuple(names)
    if names and key not in _reported_ignored:
        _reported_ignored.add(key)
        logger.warning(
            "ignored on one machine (cluster, GPU, backend and scheduler settings): %s",
            ", ".join(names),
        )
    return names


def load_expr_config(argv: list[str], config_cls: type[ConfigT]) -> tuple[ConfigT, str]:
    """AReaL's ``load_expr_config``: ``--config file.yaml`` plus ``key.sub=value`` overrides.

    Returns ``(config, path of the config file)``. A leading ``*.py`` argument is skipped, as in
    AReaL. Errors are :class:`ConfigError` (a ValueError) naming the key and the valid keys.
    """
    import argparse

    args = list(argv)
    if args and args[0].endswith(".py"):
        args = args[1:]
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--config")
    known, overrides = parser.parse_known_args(args)
    if known.config is None:
        raise ConfigError(
            "no --config given: run it as `python script.py --config file.yaml [key.sub=value ...]`"
        )
    data = load_config_dict(known.config, overrides, config_cls)
    config = build_config(config_cls, data)
    report_ignored(config)
    return config, str(Path(known.config).absolute())


__all__ = [
    "AgentConfig",
    "BaseExperimentConfig",
    "ConfigError",
    "EvaluatorConfig",
    "GRPOConfig",
    "InferenceEngineConfig",
    "MicroBatchSpec",
    "NormConfig",
    "OptimizerConfig",
    "PPOActorConfig",
    "PPOConfig",
    "PPOCriticConfig",
    "RecoverConfig",
    "RejectionSamplingConfig",
    "SaverConfig",
    "StatsLoggerConfig",
    "TrainDatasetConfig",
    "TrainEngineConfig",
    "ValidDatasetConfig",
    "build_config",
    "load_expr_config",
]
