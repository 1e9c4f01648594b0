from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("screening", "0004_review_desk"),
    ]

    operations = [
        migrations.AddField(
            model_name="screeningsession",
            name="stopping_rule",
            field=models.CharField(
                choices=[("callaghan", "Random sample after the ranked phase (Callaghan & "
                                       "Müller-Hansen 2020)")],
                default="callaghan", max_length=20),
        ),
    ]
