"""python manage.py project_member PROJECT_ID USERNAME ROLE: add a member or change their role.

With --remove (and no ROLE) the member is removed. An operator's shell is not a member of the
project, so no role is asked of it; the rules that protect the project still hold: a project
never loses its last owner. Every refusal is one line and exit status 1.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from projects import services
from projects.models import Project, Role


class Command(BaseCommand):
    help = "Add a user to a project with a role, change their role, or (--remove) remove them."

    def add_arguments(self, parser: CommandParser) -> None:
        # Read as text: an id that is no number is refused in the same one line (exit 1) as
        # an unknown one, not with argparse's usage block (exit 2).
        parser.add_argument("project_id", metavar="PROJECT_ID")
        parser.add_argument("username", metavar="USERNAME", help="a username or e-mail address")
        parser.add_argument("role", nargs="?", metavar="ROLE",
                            help=f"one of {', '.join(Role.values)} (not with --remove)")
        parser.add_argument("--remove", action="store_true", help="remove the member instead")

    def handle(self, *args: Any, **options: Any) -> None:
        given = str(options["project_id"]).strip()
        project = Project.objects.filter(pk=int(given)).first() if given.isdigit() else None
        if project is None:
            raise CommandError(f"No project has the id {options['project_id']}.")
        try:
            member = services.user_find(identifier=options["username"])
        except services.ProjectError as exc:
            raise CommandError(exc.message) from None
        role = options["role"]
        if options["remove"]:
            if role:
                raise CommandError("--remove takes no ROLE.")
            self._remove(project, member)
            return
        if role not in Role.values:
            raise CommandError(f"Unknown role “{role or ''}”; choose one of "
                               f"{', '.join(Role.values)}.")
        try:
            services.member_set(actor=None, project=project, member=member, role=role)
        except services.ProjectError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"{member.get_username()} is {role} of “{project.name}” "
                          f"(project {project.pk}).")

    def _remove(self, project: Project, member: Any) -> None:
        try:
            services.member_remove(user=None, project=project, member=member)
        except services.ProjectError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"{member.get_username()} is no longer a member of “{project.name}” "
                          f"(project {project.pk}).")
