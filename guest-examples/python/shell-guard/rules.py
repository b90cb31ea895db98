"""The dangerous-shell rules of the Python shell-guard example: pure Python, no bindings.

Kept apart from `app.py` (the WIT glue) so the decision can be unit-tested with a plain
`python3 -m unittest` outside WebAssembly. Not a shell parser: `shlex` splits words and control
operators, which is enough to find each simple command's program and arguments. Obfuscation
(variables, base64, aliases) defeats any guard of this kind; it is one layer, not the sandbox.
"""

import shlex

# Control operators that end a simple command; `|` also ends one but joins it into a pipeline.
_SEPARATORS = {";", "&&", "||", "&", "\n", ";;", "(", ")"}
# Words before the program that do not change what runs.
_PREFIXES = {"sudo", "doas", "command", "exec", "nice", "nohup", "time", "env"}
_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "fish"}
_DOWNLOADERS = {"curl", "wget"}


def _program(words):
    """The program of a simple command and its arguments, after prefixes and `VAR=value`s."""
    i = 0
    while i < len(words) and (words[i] in _PREFIXES or "=" in words[i].split("/")[0]):
        i += 1
    if i == len(words):
        return None, []
    # `/bin/rm` is `rm`.
    return words[i].rsplit("/", 1)[-1], words[i + 1 :]


def _pipelines(command):
    """Splits a command line into pipelines, each a list of stages, each a list of words."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    pipelines, stages, words = [], [], []
    for token in lexer:
        if token in _SEPARATORS or token == "|":
            if words:
                stages.append(words)
            words = []
            if token != "|":
                if stages:
                    pipelines.append(stages)
                stages = []
        else:
            words.append(token)
    if words:
        stages.append(words)
    if stages:
        pipelines.append(stages)
    return pipelines


def _recursive(flag):
    return flag in ("--recursive", "-r", "-R") or (
        flag.startswith("-") and not flag.startswith("--") and ("r" in flag or "R" in flag)
    )


def _deny_reason(program, args):
    if program == "rm":
        if "--no-preserve-root" in args:
            return "runs `rm --no-preserve-root`"
        targets = [a for a in args if not a.startswith("-")]
        if any(_recursive(a) for a in args if a.startswith("-")) and any(
            t.rstrip("/") in ("", "/*", "~", "$HOME") for t in targets
        ):
            return "recursively deletes `/` or the home folder"
    if program == "mkfs" or program.startswith("mkfs."):
        return "formats a filesystem (`mkfs`)"
    return None


def check(command, deny=()):
    """Returns why `command` must be denied, or None when the guard has no objection.

    `deny` holds extra substrings (the rule's `config.deny`), matched on whitespace-normalised
    text. A line `shlex` cannot split (an unbalanced quote) is left alone: the shell would refuse
    to run it as well.
    """
    normalised = " ".join(command.split())
    for entry in deny:
        needle = " ".join(str(entry).split())
        if needle and needle in normalised:
            return f"matches the deny-list entry `{entry}`"
    try:
        pipelines = _pipelines(command)
    except ValueError:
        return None
    for stages in pipelines:
        programs = [_program(words) for words in stages]
        for program, args in programs:
            if program is None:
                continue
            reason = _deny_reason(program, args)
            if reason:
                return reason
        names = [program for program, _ in programs]
        for i, name in enumerate(names):
            if name in _DOWNLOADERS and any(later in _SHELLS for later in names[i + 1 :]):
                return f"pipes a download (`{name}`) into a shell"
    return None
