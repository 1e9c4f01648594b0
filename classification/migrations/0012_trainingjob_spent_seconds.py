from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("classification", "0011_lists_by_project"),
    ]

    operations = [
        migrations.AddField(
            model_name="trainingjob",
            name="spent_seconds",
            field=models.FloatField(default=0.0),
        ),
    ]
