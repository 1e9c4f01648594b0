"""Screening: a team reads a collection record by record to a statistically defensible stop.

A session copies the collection's texts into Records once, so screening never re-reads the
dataset file. Each reviewer's yes/no/unsure per label is a Decision; the value a record finally
has for a label (agreed, single reviewer, or resolved) is kept on the Record (``final``), so the
next-record query and the stopping rule read one table.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from screening import stopping_rules

VALUES = ("yes", "no", "unsure")


class Stage(models.TextChoices):
    """Where a decision is made: PRISMA 2020's screening of records, then of reports."""

    TITLE_ABSTRACT = "title_abstract", "Title and abstract"
    FULL_TEXT = "full_text", "Full text"


class RecordState(models.TextChoices):
    """A record's place on its path through both stages (screening/record_state.py has the
    moves it may make)."""

    SCREENING = "screening", "Being screened at title/abstract"
    CONFLICT = "conflict", "Reviewers disagree at title/abstract"
    EXCLUDED = "excluded", "Excluded at title/abstract"
    MARKED_NO = "marked_no", "Marked no by the stopping rule"
    SOUGHT = "sought", "Report sought"
    NOT_RETRIEVED = "not_retrieved", "Report not retrieved"
    RETRIEVED = "retrieved", "Report retrieved, being assessed"
    INCLUDED = "included", "Included at full text"
    EXCLUDED_FULL_TEXT = "excluded_full_text", "Excluded at full text"


class StoppingRule(models.TextChoices):
    # screening.stopping_rules.RULES has the assumptions; QBCB and the target method are
    # simulated only (the page would have to keep target records out of the ranker's training).
    CALLAGHAN_SPENT = "callaghan_spent", ("Random sample after the ranked phase, valid at every "
                                          "look (alpha spent)")
    CALLAGHAN = "callaghan", "Random sample after the ranked phase (Callaghan & Müller-Hansen 2020)"
    # The default (stopping_rules.DEFAULT_RULE says why).
    CONFSEQ = "confseq", ("Random sample after the ranked phase, a confidence sequence for the "
                          "relevant records left (Waudby-Smith & Ramdas 2020)")


class ScreeningSession(models.Model):
    PROJECT_LOOKUP = "project"

    class Order(models.TextChoices):
        MOST_LIKELY = "most_likely", "Most likely first (find them all)"
        LEAST_CERTAIN = "least_certain", "Least certain first (improve the model)"

    class Phase(models.TextChoices):
        RANKED = "ranked", "Ranked"
        SAMPLING = "sampling", "Random sampling"
        STOPPED = "stopped", "Stopped"

    class Source(models.TextChoices):
        DATASET = "dataset", "Dataset"
        BATCH = "batch", "Finished batch"

    project = models.ForeignKey("projects.Project", on_delete=models.PROTECT,
                                related_name="screening_sessions")
    name = models.CharField(max_length=200)
    # What it screens: one collection, a dataset or a finished batch (the check constraint).
    # Its texts are copied into Records at creation, so a batch may be purged after its week
    # (SET_NULL) and the session goes on; a dataset stays (PROTECT).
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.DATASET)
    dataset = models.ForeignKey("dataset_management.Dataset", on_delete=models.PROTECT,
                                null=True, blank=True, related_name="screening_sessions")
    batch = models.ForeignKey("classification.BatchJob", on_delete=models.SET_NULL,
                              null=True, blank=True, related_name="screening_sessions")
    # The collection's name and counts as they were at creation (PRISMA's "identified" for a
    # batch, which may be gone by export time).
    source_name = models.CharField(max_length=255, blank=True)
    source_facts = models.JSONField(default=dict, blank=True)
    labels = models.JSONField(default=list)
    starting_model = models.ForeignKey("classification.MLModel", on_delete=models.SET_NULL,
                                       null=True, blank=True, related_name="+")
    order = models.CharField(max_length=20, choices=Order.choices, default=Order.MOST_LIKELY)
    reviewers_per_record = models.PositiveSmallIntegerField(default=1)
    ranker_every = models.PositiveIntegerField(default=10)
    recall_target = models.FloatField(default=0.95)
    confidence = models.FloatField(default=0.95)
    phase = models.CharField(max_length=10, choices=Phase.choices, default=Phase.RANKED)
    # The stopping rule (screening.stopping_rules.RULES; issue 36's simulations chose the
    # default). Sessions made before it keep the plain test they started with (migration 0005).
    stopping_rule = models.CharField(max_length=20, choices=StoppingRule.choices,
                                     default=stopping_rules.DEFAULT_RULE)
    # Random-sampling phase (Callaghan & Müller-Hansen 2020): when it began and how many
    # records were still unscreened then (their N).
    sampling_started_at = models.DateTimeField(null=True, blank=True)
    sampling_pool = models.PositiveIntegerField(default=0)
    final_count = models.PositiveIntegerField(default=0)
    ranked_at_count = models.PositiveIntegerField(default=0)
    ranking_refreshed_at = models.DateTimeField(null=True, blank=True)
    ranker_running_since = models.DateTimeField(null=True, blank=True)
    ranker_error = models.TextField(blank=True)
    # Per label, the ranker of the last refresh and its candidates' figures (ranker_choice.py);
    # then the records the background fill put in the embedding cache (vector_fill.py).
    ranker_choice = models.JSONField(default=dict, blank=True)
    vectors_ready = models.PositiveIntegerField(default=0)
    vectors_filling_since = models.DateTimeField(null=True, blank=True)
    vectors_error = models.TextField(blank=True)
    # A starting model was chosen and its scores are not stored yet: the first ranker refresh
    # (on the inference worker) scores the records with it, so creating a session never waits.
    starting_pending = models.BooleanField(default=False)
    stop_justification = models.JSONField(default=dict, blank=True)
    # The review desk (issue 35): eligibility criteria a maintainer writes, the terms the
    # screen page highlights, the session's exclusion reasons (a list of strings).
    criteria = models.TextField(blank=True)
    include_terms = models.JSONField(default=list, blank=True)
    exclude_terms = models.JSONField(default=list, blank=True)
    exclusion_reasons = models.JSONField(default=list, blank=True)
    # Who screens it; empty: every member with the reviewer role or above.
    screeners = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    # Dual screening is independent only while reviewers cannot see each other's decisions:
    # meaningful with reviewers_per_record == 2; the owner may end it (activity log).
    blind = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL,
                                   null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.CheckConstraint(
            condition=(models.Q(source="dataset", dataset__isnull=False, batch__isnull=True)
                       | models.Q(source="batch", dataset__isnull=True)),
            name="screening_session_one_collection")]

    def __str__(self) -> str:
        return self.name

    @property
    def collection_name(self) -> str:
        return self.dataset.name if self.dataset_id else self.source_name


class Record(models.Model):
    PROJECT_LOOKUP = "session__project"

    session = models.ForeignKey(ScreeningSession, on_delete=models.CASCADE,
                                related_name="records")
    position = models.PositiveIntegerField()
    ext_id = models.CharField(max_length=255, blank=True)
    title = models.TextField(blank=True)
    abstract = models.TextField(blank=True)
    # Copied from the collection's row at creation so exports can be cited and traced back:
    # identifiers {pmid, doi, pmcid, id, accession} and citation {authors (list), year,
    # journal}, only those the row has (dataset_management.articles).
    identifiers = models.JSONField(default=dict, blank=True)
    citation = models.JSONField(default=dict, blank=True)
    # The collection's own labels (a labelled dataset): for simulation only, never shown.
    truth = models.JSONField(null=True, blank=True)
    scores = models.JSONField(default=dict, blank=True)
    priority = models.FloatField(default=0.0)
    sample_order = models.PositiveIntegerField(null=True, blank=True)
    # Final value per label at title/abstract; a label final yes or unsure there moves the
    # record to full text for that label, whose final values (and the exclusion reason of a
    # final no) are kept apart so PRISMA reads both stages from this table.
    final = models.JSONField(default=dict, blank=True)
    fulltext_final = models.JSONField(default=dict, blank=True)
    fulltext_reasons = models.JSONField(default=dict, blank=True)
    # Distinct reviewers who decided it, kept under the record's lock: the next-record query
    # skips a record that has its N reviewers without counting rows.
    reviewer_count = models.PositiveSmallIntegerField(default=0)
    done = models.BooleanField(default=False)
    # ranked / sample / stop: the phase in which the record got its final values.
    done_phase = models.CharField(max_length=10, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)
    # Where the record is on its path (screening/record_state.py keeps it and its moves);
    # PRISMA's boxes count this one column.
    state = models.CharField(max_length=20, choices=RecordState.choices,
                             default=RecordState.SCREENING)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["session", "position"],
                                               name="screening_record_position_unique")]
        indexes = [models.Index(fields=["session", "done", "-priority"])]

    def __str__(self) -> str:
        return f"record {self.position + 1} of session {self.session_id}"


class Decision(models.Model):
    PROJECT_LOOKUP = "record__session__project"

    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="decisions")
    # PROTECT: a reviewer removed from the project keeps their decisions, attributed.
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                 related_name="+")
    label = models.CharField(max_length=200)
    stage = models.CharField(max_length=14, choices=Stage.choices, default=Stage.TITLE_ABSTRACT)
    value = models.CharField(max_length=6)
    # One of the session's exclusion_reasons, for a "no": optional at title/abstract,
    # required at full text (the service checks it).
    exclusion_reason = models.CharField(max_length=200, blank=True)
    note = models.TextField(blank=True)
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["record", "reviewer", "label", "stage"],
                                               name="screening_decision_unique")]

    def __str__(self) -> str:
        return f"{self.label}={self.value} by {self.reviewer_id}"


class Resolution(models.Model):
    PROJECT_LOOKUP = "record__session__project"

    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="resolutions")
    label = models.CharField(max_length=200)
    stage = models.CharField(max_length=14, choices=Stage.choices, default=Stage.TITLE_ABSTRACT)
    value = models.CharField(max_length=6)
    exclusion_reason = models.CharField(max_length=200, blank=True)
    resolver = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                 related_name="+")
    note = models.TextField(blank=True)
    # Why the maintainer resolved it although the record's full-text work is left behind.
    discard_reason = models.TextField(blank=True)
    resolved_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["record", "label", "stage"],
                                               name="screening_resolution_unique")]

    def __str__(self) -> str:
        return f"{self.label}={self.value} resolved"


class FullTextReport(models.Model):
    """The report (full text) of a record at the full-text stage: PRISMA's reports sought, not
    retrieved, and assessed. One per record, made when the record first reaches full text."""

    PROJECT_LOOKUP = "record__session__project"

    class Status(models.TextChoices):
        SOUGHT = "sought", "Sought"
        RETRIEVED = "retrieved", "Retrieved"
        NOT_RETRIEVED = "not_retrieved", "Not retrieved"

    record = models.OneToOneField(Record, on_delete=models.CASCADE, related_name="fulltext")
    status = models.CharField(max_length=14, choices=Status.choices, default=Status.SOUGHT)
    not_retrieved_reason = models.TextField(blank=True)
    # Relative to MEDIA_ROOT; the extracted text is kept here so the page never re-reads it.
    pdf_path = models.CharField(max_length=500, blank=True)
    text = models.TextField(blank=True)
    text_chars = models.PositiveIntegerField(default=0)
    pages = models.PositiveIntegerField(default=0)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL,
                                    null=True, blank=True, related_name="+")
    uploaded_at = models.DateTimeField(null=True, blank=True)
    # Set when the record left full text by a maintainer's confirmed resolution: the report
    # and its decisions are kept, no longer counted.
    superseded_at = models.DateTimeField(null=True, blank=True)
    superseded_reason = models.TextField(blank=True)

    def __str__(self) -> str:
        return f"full text of {self.record} ({self.status})"


class SimulationRun(models.Model):
    """``manage.py simulate_screening`` run as a job on the inference queue, for the page.

    ``result`` holds the command's JSON summary (``summary``) and, per seed, the recall curve
    (records read -> relevant found, at most 300 points) with its stopping point.
    """

    PROJECT_LOOKUP = "dataset__project"

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    # CASCADE: a simulation is derived from the dataset alone and means nothing without it.
    dataset = models.ForeignKey("dataset_management.Dataset", on_delete=models.CASCADE,
                                related_name="screening_simulations")
    label = models.CharField(max_length=200)
    recall_target = models.FloatField(default=0.95)
    confidence = models.FloatField(default=0.95)
    seeds = models.PositiveSmallIntegerField(default=5)
    every = models.PositiveIntegerField(default=10)
    patience = models.PositiveIntegerField(default=50)
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL,
                                   null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"simulation {self.pk} of {self.label} on dataset {self.dataset_id}"

    @property
    def is_active(self) -> bool:
        return self.state in (self.State.QUEUED, self.State.RUNNING)


# --- tags and re-screening (screening/tags.py, screening/rescreen.py) --------------------------

TAG_COLOURS = ("grey", "red", "orange", "yellow", "green", "teal", "blue", "purple")


class Tag(models.Model):
    """A label a maintainer defines for a session; reviewers put it on records (RecordTag)."""

    PROJECT_LOOKUP = "session__project"

    session = models.ForeignKey(ScreeningSession, on_delete=models.CASCADE, related_name="tags")
    name = models.CharField(max_length=60)
    colour = models.CharField(max_length=10, choices=[(c, c) for c in TAG_COLOURS],
                              default="grey")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL,
                                   null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["session", "name"],
                                               name="screening_tag_name_unique")]

    def __str__(self) -> str:
        return self.name


class RecordTag(models.Model):
    """One person's tag on a record: each keeps their own, so a blind reviewer sees only theirs."""

    PROJECT_LOOKUP = "record__session__project"

    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="record_tags")
    tag = models.ForeignKey(Tag, on_delete=models.CASCADE, related_name="record_tags")
    tagged_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                  related_name="+")
    tagged_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["record", "tag", "tagged_by"],
                                               name="screening_record_tag_unique")]
        indexes = [models.Index(fields=["tag", "record"])]

    def __str__(self) -> str:
        return f"{self.tag} on {self.record}"


class Rescreen(models.Model):
    """A maintainer sent records back to title/abstract: why, by whom, how many."""

    PROJECT_LOOKUP = "session__project"

    session = models.ForeignKey(ScreeningSession, on_delete=models.CASCADE,
                                related_name="rescreens")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                     related_name="+")
    reason = models.TextField()
    record_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"re-screen of {self.record_count} record(s) in session {self.session_id}"


class SupersededDecision(models.Model):
    """A decision or resolution a re-screen took off its record, kept as it was: a person's
    decision is never lost, and the exports still cite it."""

    PROJECT_LOOKUP = "record__session__project"

    class Kind(models.TextChoices):
        DECISION = "decision", "Decision"
        RESOLUTION = "resolution", "Resolution"

    rescreen = models.ForeignKey(Rescreen, on_delete=models.CASCADE, related_name="superseded")
    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="superseded")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.DECISION)
    # The reviewer, or the resolver of a resolution.
    person = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                               related_name="+")
    label = models.CharField(max_length=200)
    stage = models.CharField(max_length=14, choices=Stage.choices, default=Stage.TITLE_ABSTRACT)
    value = models.CharField(max_length=6)
    exclusion_reason = models.CharField(max_length=200, blank=True)
    note = models.TextField(blank=True)
    decided_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"superseded {self.label}={self.value} by {self.person_id}"


class Prior(models.Model):
    """What the team knew before reading: a record marked relevant or irrelevant for a label
    (screening/priors.py). It trains the ranker and settles the label, but is no screening."""

    PROJECT_LOOKUP = "record__session__project"

    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="priors")
    label = models.CharField(max_length=200)
    value = models.CharField(max_length=6)
    # How the record was chosen ("search: …", "record ids", "PMIDs", "file …"), for exports.
    how = models.CharField(max_length=300)
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                               related_name="+")
    set_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["record", "label"],
                                               name="screening_prior_unique")]

    def __str__(self) -> str:
        return f"prior {self.label}={self.value} on {self.record}"


class Skip(models.Model):
    """A reviewer set a record aside (screening/skip.py): it comes back after the others."""

    PROJECT_LOOKUP = "record__session__project"

    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="skips")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                 related_name="+")
    skipped_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["record", "reviewer"],
                                               name="screening_skip_unique")]

    def __str__(self) -> str:
        return f"{self.record} skipped by {self.reviewer_id}"
