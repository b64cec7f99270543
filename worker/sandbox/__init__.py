"""The sandbox: bubblewrap + cgroups around every build and every run of a submission.

`types.Sandbox` is the interface everything goes through and `bwrap.BwrapSandbox` the one real
wrapper; `workspace` gives each run a fresh work dir; `preflight` refuses to start a judge where
submissions cannot be contained; `cgroups`, `mounts`, `launch`, `io`, `warm` are its parts. Where
bubblewrap, cgroups and work dirs are is given (worker.machine.Machine), never read here.
"""
