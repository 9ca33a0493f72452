"""Training on a real two-node Ray cluster, joined by address as the README says (issue 22).

The cluster is two `ray start --block` processes on this machine, each with its own ports and
temp dir, with Ray's token authentication as a fresh machine gets it from the README's
recipe: `ray get-auth-token --generate` writes the token into ~/.ray/auth_token (here: a
HOME of the test's own), the head turns token mode on because a token is there, the second
node joins with RAY_AUTH_MODE=token. train.py then joins by --address, with nothing but the
token in ~/.ray/auth_token, as the README's trainer does. The second node alone has the
custom resource the config's env runners need, so sampling can only happen there; its worker
logs (and not the head's) show the env runners.

The cluster is torn down by the fixture whatever happens: each `ray start --block` is sent
SIGTERM (it stops its own node's processes), and anything still running whose command line
names the test's temp dir is killed by its pid. No `ray stop`: it would stop every Ray on the
machine, other people's included.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from agents.rllib_training import RunError, join_failure, token_source

ROOT = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).with_name("ray")
STARTED = "Ray runtime started"
RESOURCE = "cdc_second_node"  # only the second node has it; the config's env runners need it


@dataclass
class Cluster:
    address: str
    root: Path   # the test's temp dir: every node's files and the processes' HOME
    home: Path   # HOME of the cluster and of the trainer: .ray/auth_token is the cluster's token

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_ADDRESS", "RAY_AUTH"))}
        env.update({"HOME": str(self.home), "PYTHONPATH": str(ROOT)} | extra)
        return env

    def logs(self, node: str) -> str:
        """What the worker processes of one node ("head" or "second") wrote to stdout: an actor's
        worker starts it with ":actor_name:CLASS"."""
        logs = self.root / node / "session_latest" / "logs"
        return "".join(p.read_text(errors="replace") for p in logs.glob("worker-*.out"))


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def node_ports(ports: list[int]) -> list[str]:
    names = ("--ray-client-server-port", "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port",
             "--runtime-env-agent-port", "--metrics-export-port", "--node-manager-port", "--object-manager-port")
    return [f"{name}={port}" for name, port in zip(names, ports, strict=True)]


def start_node(cluster: Cluster, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen:
    log = cluster.root / f"{name}.log"
    process = subprocess.Popen(
        [str(RAY), "start", "--block", "--num-cpus", "1" if name == "head" else "2",
         f"--temp-dir={cluster.root / name}", "--object-store-memory", str(100 * 2**20),
         "--disable-usage-stats", *args],
        stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)
    deadline = time.monotonic() + 120
    while STARTED not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"`ray start` of the {name} node failed:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)
    return process


def ours(root: Path) -> list[int]:
    """Processes whose command line names the test's temp dir: the cluster's, and only them."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(root).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def tear_down(processes: list[subprocess.Popen], root: Path) -> None:
    for process in reversed(processes):  # the second node first, then the head
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    for pid in ours(root):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    # A short path: Ray's unix sockets live under the temp dir, and their paths have a limit.
    root = Path(tempfile.mkdtemp(prefix="cdcray-", dir="/tmp"))
    port, *ports = free_ports(15)
    cluster = Cluster(address=f"127.0.0.1:{port}", root=root, home=root / "home")
    cluster.home.mkdir()
    processes: list[subprocess.Popen] = []
    try:
        subprocess.run([str(RAY), "get-auth-token", "--generate"], env=cluster.env(), check=True,
                       capture_output=True, timeout=60)
        assert (cluster.home / ".ray" / "auth_token").is_file()
        processes.append(start_node(cluster, "head", ["--head", f"--port={port}", "--node-ip-address=127.0.0.1",
                                                      "--include-dashboard=false", *node_ports(ports[:7])],
                                    cluster.env()))
        assert "Token authentication is enabled" in (root / "head.log").read_text()
        processes.append(start_node(cluster, "second", [f"--address={cluster.address}",
                                                        f"--resources={json.dumps({RESOURCE: 2})}",
                                                        *node_ports(ports[7:14])],
                                    cluster.env(RAY_AUTH_MODE="token")))
        yield cluster
    finally:
        tear_down(processes, root)
        shutil.rmtree(root, ignore_errors=True)


def train(cluster: Cluster, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "scripts/train.py", *args, "--address", cluster.address, "--workers", "1"],
                          capture_output=True, text=True, cwd=ROOT, env=cluster.env(**env), timeout=600)


@pytest.mark.slow
def test_training_on_two_nodes_by_address_resumes_and_exports_a_model_that_plays(cluster: Cluster,
                                                                                 tmp_path: Path) -> None:
    out = tmp_path / "run"
    config = {
        "run_name": "cluster", "trainer": "rllib", "ruleset": "classic", "players": 2, "seed": 3,
        "total_timesteps": 2000, "max_turns": 80, "opponents": ["simple", "bold"],
        "imitation": {"teacher": "bold", "games": 10, "epochs": 1, "batch_size": 64},
        "league": {"snapshot_every": 1000, "max_snapshots": 1, "self_play_fraction": 0.3},
        "ppo": {"batch_size": 128, "n_epochs": 1, "net_arch": [16]},
        "rllib": {"env_runners": 2, "envs_per_env_runner": 2, "train_batch_size": 500,
                  "env_runner_resources": {RESOURCE: 1}},
        "checkpoint_every": 1000,
        "evaluation": {"games": 4, "games_others": 0, "opponents": ["simple"]},
        "out_dir": str(out),
    }
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")

    first = train(cluster, "--config", str(path), "--eval-games", "0")  # evaluate.py plays it below
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    assert f"joined the Ray cluster at {cluster.address}: 2 nodes, 3 CPUs (token authentication, " \
           "token from ~/.ray/auth_token)" in first.stdout
    assert json.loads((out / "report.json").read_text())["steps"] >= 2000
    # The env runners sampled on the second node, the only one with the resource they need.
    assert cluster.logs("second").count(":actor_name:MultiAgentEnvRunner") >= 2
    assert "MultiAgentEnvRunner" not in cluster.logs("head")

    checkpoints = sorted((out / "checkpoints").glob("step_*"))
    assert len(checkpoints) == 2
    resumed = train(cluster, "--config", str(path), "--resume", "--timesteps", "3000", "--eval-games", "0")
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-3000:]
    assert f"resuming from {checkpoints[-1]}" in resumed.stdout
    report = json.loads((out / "report.json").read_text())
    assert 3000 <= report["steps"] < 3000 + 1000

    played = subprocess.run([sys.executable, "scripts/evaluate.py", "--agents", str(out / "model.zip"), "bold",
                             "--games", "10", "--workers", "1", "--out", str(tmp_path / "evaluation")],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert played.returncode == 0, played.stdout[-3000:] + played.stderr[-3000:]
    assert len(json.loads((tmp_path / "evaluation" / "tournament.json").read_text())["games_played"]) == 10


@pytest.mark.slow
def test_a_trainer_without_the_token_is_told_where_to_put_it(cluster: Cluster, tmp_path: Path) -> None:
    empty = tmp_path / "home"  # a machine the token was not copied to
    empty.mkdir()
    refused = train(cluster, "--config", "configs/train/classic_2p_rllib.yaml", "--out", str(tmp_path / "run"),
                    HOME=str(empty))
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        f"error: the Ray head at {cluster.address} requires its token and this machine has none: copy the "
        "head's ~/.ray/auth_token to ~/.ray/auth_token here (or set RAY_AUTH_TOKEN to it, or "
        "RAY_AUTH_TOKEN_PATH to the copy's path)"]
    wrong = train(cluster, "--config", "configs/train/classic_2p_rllib.yaml", "--out", str(tmp_path / "run"),
                  RAY_AUTH_TOKEN="not-the-heads")
    assert wrong.returncode == 2 and "refused the token from RAY_AUTH_TOKEN" in wrong.stderr
    assert "gcs_client" not in wrong.stderr + refused.stderr and "Traceback" not in wrong.stderr + refused.stderr


def test_the_token_is_looked_up_where_ray_looks(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    assert token_source({"HOME": str(home)}) is None
    (home / ".ray" / "auth_token").write_text("abc")
    assert token_source({"HOME": str(home)}) == "~/.ray/auth_token"
    copy = tmp_path / "copy"
    copy.write_text("abc\n")
    assert token_source({"HOME": str(home), "RAY_AUTH_TOKEN_PATH": str(copy)}) == f"RAY_AUTH_TOKEN_PATH ({copy})"
    both = {"HOME": str(home), "RAY_AUTH_TOKEN_PATH": str(copy), "RAY_AUTH_TOKEN": "x"}
    assert token_source(both) == "RAY_AUTH_TOKEN"
    with pytest.raises(RunError, match="RAY_AUTH_TOKEN_PATH=.*names no readable token"):
        token_source({"HOME": str(home), "RAY_AUTH_TOKEN_PATH": str(tmp_path / "absent")})


def test_a_refused_join_names_its_cause() -> None:
    refused = "gcs_client.cc:210: Failed to get cluster ID: Unauthenticated: RPC error: InvalidAuthToken: …"
    assert "this machine has none" in join_failure("h:1", refused, None, None)
    assert "refused the token from ~/.ray/auth_token" in join_failure("h:1", refused, "~/.ray/auth_token", None)
    assert "RAY_AUTH_MODE=disabled is set here" in join_failure("h:1", refused, "~/.ray/auth_token", "disabled")
    other = join_failure("h:1", "ConnectionError: Failed to connect to Ray cluster at h:1", None, None)
    assert other.startswith("cannot join the Ray cluster at h:1 (ConnectionError: Failed to connect")


@pytest.mark.slow
def test_bench_rllib_measures_each_runner_on_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    config = {"run_name": "bench", "trainer": "rllib", "players": 2, "max_turns": 80, "opponents": ["simple"],
              "ppo": {"batch_size": 64, "net_arch": [16]},
              "rllib": {"envs_per_env_runner": 1, "train_batch_size": 200, "env_runner_resources": {RESOURCE: 1}}}
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    runners_before = cluster.logs("second").count(":actor_name:MultiAgentEnvRunner")
    bench = subprocess.run([sys.executable, "scripts/bench_rllib.py", "--config", str(path), "--runners", "2",
                            "--rounds", "1", "--address", cluster.address],
                           capture_output=True, text=True, cwd=ROOT, env=cluster.env(COLUMNS="200"), timeout=300)
    assert bench.returncode == 0, bench.stdout[-2000:] + bench.stderr[-3000:]
    rows = [line for line in bench.stdout.splitlines() if line.startswith("│")]
    assert [row.split("│")[2].strip() for row in rows] == ["#1", "#2", "in all"]
    # Both on the second node, the one with the resource: one node in all, and its logs show them.
    assert "1 node(s)" in rows[-1]
    assert cluster.logs("second").count(":actor_name:MultiAgentEnvRunner") == runners_before + 2
    assert "MultiAgentEnvRunner" not in cluster.logs("head")


def test_bench_rllib_refuses_counts_out_of_range() -> None:
    for args, said in ((["--runners", "2", "0"], "--runners 0: each count of env runners must be 1 or more"),
                       (["--rounds", "0"], "--rounds 0: it must be 1 or more")):
        result = subprocess.run([sys.executable, "scripts/bench_rllib.py", *args], capture_output=True, text=True,
                                cwd=ROOT, timeout=120)
        # One line on stderr, nothing on stdout (where the bench's figures go).
        assert result.returncode == 2 and result.stderr.strip() == f"error: {said}" and not result.stdout


def test_env_runners_the_ray_cannot_hold_are_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import ray

    from agents.rllib_training import check_capacity
    from agents.training import RllibConfig

    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": 4.0, "sampler": 2.0})
    check_capacity(RllibConfig(env_runners=4), "the cluster")
    with pytest.raises(RunError, match=r"cannot hold 16 env runners, which need 16 CPU \(it has 4\): lower rllib"):
        check_capacity(RllibConfig(env_runners=16), "the cluster")
    with pytest.raises(RunError, match=r"need 3 sampler \(it has 2\): .*--resources"):
        check_capacity(RllibConfig(env_runners=3, env_runner_resources={"sampler": 1}), "the cluster")
    # A learner without a GPU takes a CPU of its own: 4 runners and a learner on 4 CPUs waited for ever.
    with pytest.raises(RunError, match=r"cannot hold 4 env runners and 1 learner\(s\), which need 5 CPU \(it has 4\)"):
        check_capacity(RllibConfig(env_runners=4, learners=1), "the cluster")
    check_capacity(RllibConfig(env_runners=3, learners=1), "the cluster")
    # Learners on GPUs need them (they learnt on CPUs: gpus_per_learner was never asked for).
    with pytest.raises(RunError, match=r"need 2 GPU \(it has 0\): lower rllib.gpus_per_learner"):
        check_capacity(RllibConfig(env_runners=4, learners=2, gpus_per_learner=1), "the cluster")


def test_learners_get_their_gpus_and_the_train_batch_is_the_whole_updates() -> None:
    from agents.rllib_training import algorithm_config
    from agents.training import load_config
    from cdc_env.rules import load_ruleset

    config = load_config(ROOT / "configs" / "train" / "complete_8p_rllib.yaml")
    spread = config.rllib.model_copy(update={"learners": 4, "gpus_per_learner": 1.0})
    built = algorithm_config(config.model_copy(update={"rllib": spread}), load_ruleset(config.ruleset))
    assert built.num_learners == 4 and built.num_gpus_per_learner == 1.0
    assert built.train_batch_size_per_learner * 4 == config.rllib.train_batch_size
    # A minibatch larger than a learner's share was let through, then refused by RLlib mid-run.
    from agents.training import ConfigError

    with pytest.raises(ConfigError, match=r"ppo.batch_size: 3000 is more than each learner's share of "
                                          r"rllib.train_batch_size \(2000\)"):
        load_config(ROOT / "configs" / "train" / "classic_2p_rllib.yaml",
                    {"rllib.learners": 2, "rllib.train_batch_size": 4000, "ppo.batch_size": 3000})
