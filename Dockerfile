# The All-Season explorer, served on port 8501:
#   docker build -t allseason . && docker run --rm -p 8501:8501 allseason
# Engine and app only (requirements.txt): no Dask, no test tools, no real data sets (the app
# shows the tracked MNIST snapshot; the Paper tables page's live runs need the data, README).
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# run as a plain user; numba's cache (allseason/__pycache__) must be writable by that user,
# or numba would look for it elsewhere and the warm-up below would be wasted
RUN useradd --create-home --uid 1000 app
WORKDIR /app

# the pinned requirements first: this layer is rebuilt only when they change
COPY requirements.txt ./
RUN pip install -r requirements.txt

# the code, then the package itself (editable: one copy of the code, the one the app imports)
COPY --chown=app:app . .
RUN pip install --no-deps -e . && chown -R app:app /app

USER app
# compile every numba kernel now, so its on-disk cache is in the image and the first visitor
# does not wait (on a CPU unlike the build machine's, numba recompiles once)
RUN python -c "from allseason import api; print(f'kernels compiled in {api.warm_up():.1f} s')"

# small hosts (a free Hugging Face Space, 512 MB-1 GB): uncomment for the low-memory setting
# (docs/deployment.md: a smaller cache, one race at a time, closed tabs' sessions dropped
# after 5 s instead of 120 s)
# ENV ALLSEASON_LOW_MEMORY=1 STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL=5

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import sys, urllib.request; \
r = urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4); \
sys.exit(0 if r.status == 200 else 1)"

CMD ["streamlit", "run", "app.py", "--server.address", "0.0.0.0", "--server.port", "8501", \
     "--browser.gatherUsageStats", "false"]
