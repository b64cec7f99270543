"""The sandbox: bubblewrap + cgroups around every build and every run of a submission.

`bwrap.Sandbox.run` is the one wrapper everything goes through; `workspace` gives each run a fresh
work dir (and `workspace.sandboxed_run` does both in one call); `preflight` refuses to start a judge
where submissions cannot be contained; `cgroups`, `mounts`, `launch`, `io`, `warm` are its parts.
"""
