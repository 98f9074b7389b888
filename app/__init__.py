"""The Gradio web app."""
