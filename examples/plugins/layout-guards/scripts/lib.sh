# Sourced by context.sh.
CONVENTIONS="layout-guards: this team writes tests first and never force-pushes."
