from django.db import migrations, models

CHOICES = [
    ("callaghan_spent", "Random sample after the ranked phase, valid at every look (alpha spent)"),
    ("callaghan", "Random sample after the ranked phase (Callaghan & Müller-Hansen 2020)"),
]


class Migration(migrations.Migration):
    """Sessions that exist keep the plain test they started with; new ones get the default."""

    dependencies = [
        ("screening", "0004_review_desk"),
    ]

    operations = [
        migrations.AddField(
            model_name="screeningsession",
            name="stopping_rule",
            field=models.CharField(choices=CHOICES, default="callaghan", max_length=20),
        ),
        migrations.AlterField(
            model_name="screeningsession",
            name="stopping_rule",
            field=models.CharField(choices=CHOICES, default="callaghan_spent", max_length=20),
        ),
    ]
