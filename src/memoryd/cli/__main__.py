from memoryd.cli import app

app()
